"""The path guard refuses what the file system cannot look up (a name over 255 bytes, a path
over 4096) as a usage error naming the argument, for the CLI's path arguments too (exit 2, one
line, no internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import run_cli
from tests.mcp.projects import std_project
from wfops.errors import InvalidArgument
from wfops.loader.guard import NAME_MAX, PATH_MAX, inside_project, looked_up

LONG = "é" * 128  # 256 bytes in 128 characters: the limit is in bytes


def test_names_and_paths_past_the_limits_are_invalid_arguments(tmp_path: Path) -> None:
    assert inside_project(tmp_path, "x" * NAME_MAX) == tmp_path.resolve() / ("x" * NAME_MAX)
    with pytest.raises(InvalidArgument, match="has a name of 256 bytes") as caught:
        inside_project(tmp_path, f"a/{LONG}/b", argument="paths")
    assert caught.value.argument == "paths"
    with pytest.raises(InvalidArgument, match=f"a path is at most {PATH_MAX}"):
        inside_project(tmp_path, "/".join(["d" * 200] * 30))
    with pytest.raises(InvalidArgument, match="has a name of 256 bytes") as caught:
        looked_up(LONG, what="--db", argument="db")
    assert caught.value.argument == "db"


@pytest.mark.parametrize("args", [
    ["validate", f"workflows/{LONG}"],
    ["test", LONG],
    ["check", "--project", LONG],
    ["caps", "call", "std.echo", "--input-file", LONG],
    ["run", "hello.local", "--input-file", f"{LONG}/x.json"],
    ["runs", "list", "--db", f"{LONG}/x.db"],
])
def test_the_cli_refuses_an_over_long_path_argument_in_one_line(tmp_path: Path, args: list[str]) -> None:
    root = std_project(tmp_path)
    done = run_cli(*args, cwd=root)
    assert done.code == 2, (done.stdout, done.stderr)
    assert "has a name of 256 bytes" in done.stderr and "internal error" not in done.stderr
