"""Help as a shell user reads it, and completion of the names commands take."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.loop_project import write_loop_project
from tests.harness import run_cli
from wfops.cli.argtable import TABLE

COMMANDS = sorted(TABLE)
TYPE_NAME = re.compile(r"<(?:str|int|float|bool|list\[[^\]]*\]|[a-z]+ range)>")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_values_not_python_types(command: str) -> None:
    shown = run_cli(*command.split(), "--help")
    assert shown.code == 0
    assert TYPE_NAME.search(shown.stdout) is None, shown.stdout
    assert "--project PROJECT" in shown.stdout or "--project" not in shown.stdout


def test_json_help_says_array_where_an_array_is_printed() -> None:
    for command in ("runs list", "runs trace", "caps list", "sources list"):
        assert "Print one JSON array." in run_cli(*command.split(), "--help").stdout, command
    assert "Print one JSON object." in run_cli("runs", "show", "--help").stdout


def test_group_help_lists_whole_summaries() -> None:
    shown = " ".join(run_cli("--help").stdout.split())
    assert "init Scaffold a working project: sources, a workflow, a deployment, pre-commit and CI config." in shown
    assert "..." not in shown.partition("Commands:")[2]


def _complete(root: Path, line: str) -> list[str]:
    words = line.split(" ")
    done = run_cli(cwd=root, env={"_WFOPS_COMPLETE": "complete_bash", "COMP_WORDS": line,
                                  "COMP_CWORD": str(len(words) - 1)})
    assert done.code == 0, done.stderr
    return done.stdout.split()


def test_completion_of_names(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1)
    assert _complete(root, "wfops run ") == ["loop.local", "other.local"]
    assert _complete(root, "wfops run l") == ["loop.local"]
    assert _complete(root, "wfops graph ") == ["loop"]
    assert "ops.work" in _complete(root, "wfops caps show o")
    assert _complete(root, "wfops runs show ") == ["last", "last:loop.local", "last:other.local"]
    run_id = run_cli("run", "other.local", "--json", cwd=root).json()["run_id"]
    assert _complete(root, "wfops resume ") == ["last", "last:loop.local", "last:other.local", run_id]
    assert _complete(root, f"wfops runs trace {run_id[:9]}") == [run_id]
    assert _complete(tmp_path, "wfops run ") == []  # outside a project: nothing, and no error
