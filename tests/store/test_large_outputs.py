"""A node's output is bounded (WFOPS_MAX_OUTPUT_BYTES, 16 MiB by default) and a large one is
stored once in its trace row: the state change that saved it points into it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import write
from tests.runner.helpers import BLOB_OPS, env_for, wfops

OPS = BLOB_OPS

HELD = """
name: held
input: {type: object, properties: {size: {type: integer}}}
state: {text: {type: string}, whole: {type: object}}
output: {text: $state.text}
steps:
  - {id: make, uses: ops.blob, with: {size: $input.size}, save: {text: state.text}, next: again}
  - {id: again, uses: ops.blob, with: {size: $input.size}, save: state.whole, next: wait}
  - id: wait
    interrupt: approval
    request: {}
    on: {approved: end, rejected: end}
"""

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS,
                 "workflows/held.yaml": HELD, "deployments/held.yaml": "name: held.local\nworkflow: held\n"})
    assert wfops(root, "compile").returncode == 0
    return root


def test_a_large_output_is_stored_once_and_read_back_whole(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    size = 4 * MIB
    started = wfops(project, "run", "held.local", "-i", f"size={size}", "--db", str(db), "--json")
    assert started.returncode == 3, started.stderr  # waits at the interrupt: resumed below
    run_id = json.loads(started.stdout)["run_id"]
    conn = sqlite3.connect(db)
    stored = conn.execute("SELECT step, length(output), state_changes FROM trace WHERE run_id=? ORDER BY seq",
                          (run_id,)).fetchall()
    conn.close()
    assert [(step, json.loads(changes)) for step, _n, changes in stored[:2]] == [
        ("make", [{"path": "state.text", "output": "/text"}]), ("again", [{"path": "state.whole", "output": ""}])]
    assert all(n > size for _s, n, _c in stored[:2])  # the output itself, once per row
    assert db.stat().st_size < 2 * size + 2 * MIB  # two steps' outputs, not four copies

    trace = json.loads(wfops(project, "runs", "trace", run_id, "--db", str(db), "--json").stdout)
    entries = trace if isinstance(trace, list) else trace["entries"]
    assert entries[0]["state_changes"] == [{"path": "state.text", "value": "x" * size}]
    assert entries[1]["state_changes"] == [{"path": "state.whole", "value": {"text": "x" * size}}]
    # A resume rebuilds the state from the trace: the shared writes come back whole.
    done = wfops(project, "resume", run_id, "--outcome", "approved", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == {"text": "x" * size}
    # The run's output is that same value: its row points at the trace row holding it.
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT output, output_refs FROM runs WHERE id=?", (run_id,)).fetchone()
    conn.close()
    assert row == ('{"text":null}', '{"/text":[1,"/text"]}')
    assert db.stat().st_size < 2 * size + 2 * MIB
    for args in (("runs", "show", run_id, "--json"), ("runs", "list", "--json")):
        shown = json.loads(wfops(project, *args, "--db", str(db)).stdout)
        assert (shown[0] if isinstance(shown, list) else shown)["output"] == {"text": "x" * size}


def test_an_output_over_the_limit_fails_its_step_naming_the_limit(project: Path, tmp_path: Path) -> None:
    env = env_for(WFOPS_MAX_OUTPUT_BYTES="1000")
    done = wfops(project, "run", "held.local", "-i", "size=2000", "--db", str(tmp_path / "a.db"), "--json", env=env)
    assert done.returncode == 1, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error == {"type": "InvalidOutput", "step": "make",
                     "message": "ops.blob output is 2,011 bytes of JSON, over the limit of 1,000 bytes "
                                "(WFOPS_MAX_OUTPUT_BYTES); return a reference to large data (a path or URL) "
                                "instead, or raise the limit"}
    fits = wfops(project, "run", "held.local", "-i", "size=900", "--db", str(tmp_path / "a.db"), env=env)
    assert fits.returncode == 3, fits.stderr


def test_the_default_limit_is_16_mib(project: Path, tmp_path: Path) -> None:
    done = wfops(project, "run", "held.local", "-i", f"size={16 * MIB}", "--db", str(tmp_path / "b.db"), "--json")
    assert done.returncode == 1, done.stderr
    assert "over the limit of 16,777,216 bytes (WFOPS_MAX_OUTPUT_BYTES)" in json.loads(done.stdout)["error"]["message"]


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1e6"])
def test_a_bad_limit_is_a_usage_error_before_the_run(project: Path, tmp_path: Path, value: str) -> None:
    db = tmp_path / "c.db"
    done = wfops(project, "run", "held.local", "--db", str(db), env=env_for(WFOPS_MAX_OUTPUT_BYTES=value))
    assert done.returncode == 2, done.stderr
    assert f"WFOPS_MAX_OUTPUT_BYTES={value!r} is not a positive whole number of bytes" in done.stderr
    assert not db.exists()
