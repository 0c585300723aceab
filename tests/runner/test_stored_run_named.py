"""Every error after a run was stored names it (`run_id` in `--json`, the id in the text
message) and says how to resume it; an error before anything was stored never says resume."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write
from tests.mcp.helpers import STATEFUL
from tests.runner.helpers import BLOB_OPS, wfops

OPS = BLOB_OPS

BIG = """
name: big
input: {type: object, properties: {size: {type: integer}}}
state: {text: {type: string}}
steps:
  - {id: small, uses: ops.blob, with: {size: 10}, save: {text: state.text}, next: large}
  - {id: large, uses: ops.blob, with: {size: $input.size}, save: {text: state.text}, next: end}
"""


def big_project(root: Path) -> Path:
    write(root, {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": OPS,
        "workflows/big.yaml": BIG,
        "deployments/big.yaml": "name: big.local\nworkflow: big\ninput: {size: 10}\n",
    })
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@contextlib.contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path]:
    """A real filesystem of `size` bytes (tmpfs): writes past it fail with ENOSPC."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        why = f"cannot mount a tmpfs here (root is needed): {mounted.stderr.strip()}"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{why}; CI runs as root and must run the disk-full tests")
        pytest.skip(why)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_disk_full_stop_names_the_run_and_how_to_resume_it(tmp_path: Path) -> None:
    root = big_project(tmp_path / "p")
    with small_disk(tmp_path / "disk", "1m") as disk:
        db = str(disk / "wfops.db")
        done = wfops(root, "run", "big.local", "--input", "size=3000000", "--db", db, "--json")
        assert done.returncode == 4, done.stdout + done.stderr
        out = json.loads(done.stdout)
        run_id = out["run_id"]
        assert run_id and out["status"] == "error" and out["deployment"] == "big.local", out
        assert out["error"]["message"].startswith(f"run {run_id}: store {db}: disk full while trying to commit")
        assert out["error"]["hint"] == (f"free disk space, then `wfops resume {run_id}` continues the run "
                                        "from its last committed step")
        assert f"wfops: error: run {run_id}: store {db}: disk full" in done.stderr
        assert f"`wfops resume {run_id}`" in done.stderr and "Traceback" not in done.stderr
        [listed] = json.loads(wfops(root, "runs", "list", "--db", db, "--json").stdout)
        assert (listed["run_id"], listed["status"]) == (run_id, "running")

    with small_disk(tmp_path / "disk2", "1m") as disk:  # plain text names the run too
        db = str(disk / "wfops.db")
        plain = wfops(root, "run", "big.local", "--input", "size=3000000", "--db", db)
        assert plain.returncode == 4, plain.stderr
        [listed] = json.loads(wfops(root, "runs", "list", "--db", db, "--json").stdout)
        assert f"wfops: error: run {listed['run_id']}: store {db}: disk full" in plain.stderr
        assert f"then `wfops resume {listed['run_id']}` continues" in plain.stderr


def test_a_disk_full_before_the_run_is_stored_never_says_resume(tmp_path: Path) -> None:
    root = big_project(tmp_path / "p")
    with small_disk(tmp_path / "disk", "1m") as disk:
        db = str(disk / "wfops.db")
        assert wfops(root, "runs", "list", "--db", db).returncode == 0  # the store, with its schema
        with contextlib.suppress(OSError), (disk / "filler").open("wb") as filler:
            while True:  # then nothing left for the run
                filler.write(b"\0" * 4096)
                filler.flush()
        done = wfops(root, "run", "big.local", "--db", db, "--json")
        assert done.returncode == 4, done.stdout + done.stderr
        out = json.loads(done.stdout)
        assert out["run_id"] is None and "disk full" in out["error"]["message"], out
        assert out["error"]["hint"] == "free disk space, then try again"
        assert "resume" not in done.stderr and "Traceback" not in done.stderr


FLAKY = """
name: flaky
state: {said: {type: object}}
output: {said: $state.said}
steps:
  - {id: call, uses: t.die_once, with: {marker: MARKER}, save: state.said, next: end}
"""


@pytest.mark.slow  # starts an MCP server process, which dies mid-call
def test_a_run_stopped_by_a_dead_server_carries_its_run_id(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {
        "sources.yaml": f"sources:\n  t: {{kind: mcp, command: [python, {json.dumps(STATEFUL)}]}}\n",
        "workflows/flaky.yaml": FLAKY.replace("MARKER", json.dumps(str(tmp_path / "died"))),
        "deployments/flaky.yaml": "name: flaky.local\nworkflow: flaky\n",
    })
    assert wfops(root, "compile").returncode == 0
    stopped = wfops(root, "run", "flaky.local", "--json")
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    out = json.loads(stopped.stdout)
    [listed] = json.loads(wfops(root, "runs", "list", "--json").stdout)
    assert out["run_id"] == listed["run_id"] and listed["status"] == "running", out
    assert out["error"]["type"] == "RunStopped"
    assert f"`wfops resume {out['run_id']}`" in out["error"]["hint"]
    resumed = wfops(root, "resume", out["run_id"], "--json")
    assert resumed.returncode == 0, resumed.stderr
