"""The project's state directory stays inside the project: a `.wfops` that is a symlink, or
a symlink under it, is never gone through. A run refuses with one line (exit 4); validate
runs uncached (it neither reads nor writes a cache through the link)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import write
from tests.runner.helpers import wfops

HELLO = """
name: hello
steps:
  - {id: say, uses: std.echo, with: {value: hi}, next: end}
"""


def project(root: Path) -> Path:
    write(root, {"sources.yaml": "sources: {}\n", "workflows/hello.yaml": HELLO,
                 "deployments/hello.yaml": "name: hello.local\nworkflow: hello\n"})
    assert wfops(root, "compile").returncode == 0
    shutil.rmtree(root / ".wfops", ignore_errors=True)  # as a fresh checkout has it
    return root


def everything_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.mark.parametrize("linked", [".wfops", ".wfops/cache", ".wfops/cache/runs", ".wfops/locks",
                                    ".wfops/wfops.db"])
def test_a_run_refuses_a_symlinked_state_dir_and_writes_nothing_through_it(tmp_path: Path, linked: str) -> None:
    root = project(tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if linked != ".wfops/wfops.db" else outside / "wfops.db")
    for args in (("run", "hello.local"), ("run", "hello.local", "--json")):
        done = wfops(root, *args)
        assert done.returncode == 4, done.stdout + done.stderr
        assert done.stderr.startswith(f"wfops: error: {link} is a symlink; wfops keeps its state (run store, "
                                      "caches, locks) inside the project and never writes through one\n")
        assert f"hint: remove the link (`rm {link}`)" in done.stderr and "Traceback" not in done.stderr
        assert everything_under(outside) == []
    assert json.loads(done.stdout)["error"]["type"] == "StoreError"
    assert wfops(root, "resume", "20260101-000000-00000000").returncode == 4  # resume refuses it the same way
    assert everything_under(outside) == []


@pytest.mark.parametrize("linked", [".wfops", ".wfops/cache"])
def test_validate_runs_uncached_through_a_symlinked_state_dir(tmp_path: Path, linked: str) -> None:
    root = project(tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / linked).parent.mkdir(parents=True, exist_ok=True)
    (root / linked).symlink_to(outside)
    for _ in range(2):
        done = wfops(root, "validate")
        assert done.returncode == 0, done.stdout + done.stderr
    assert everything_under(outside) == []


def test_validate_never_reads_a_cache_through_a_symlink(tmp_path: Path) -> None:
    """A cache entry planted behind a link is not replayed: validate checks the files."""
    root = project(tmp_path / "p")
    write(root, {"workflows/broken.yaml": "name: broken\nsteps:\n  - {id: a, uses: std.echo, next: nowhere}\n"})
    first = wfops(root, "validate")
    assert first.returncode == 1 and "nowhere" in first.stdout, first.stdout
    cache = root / ".wfops" / "cache" / "validate.json"
    entry = json.loads(cache.read_text())
    cache.write_text(json.dumps(entry).replace("nowhere", "PLANTED"))
    replayed = wfops(root, "validate")
    assert "PLANTED" in replayed.stdout, replayed.stdout  # the real directory's cache is used
    (root / ".wfops").rename(tmp_path / "state")
    (root / ".wfops").symlink_to(tmp_path / "state")
    done = wfops(root, "validate")
    assert done.returncode == 1 and "nowhere" in done.stdout and "PLANTED" not in done.stdout, done.stdout
