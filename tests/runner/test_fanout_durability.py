"""A real process killed (SIGKILL) inside a parallel fan-out whose finished items were group
committed: resuming keeps exactly the committed items (none of them runs again) and runs
the others."""

from __future__ import annotations

import signal
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import wait_for
from tests.runner.helpers import as_json, env_for, read_log, spawn, wfops

pytestmark = pytest.mark.slow

NODES = '''
import asyncio
import json
import os
from pathlib import Path

from pydantic import BaseModel

import wfops


class In(BaseModel):
    n: int


class Out(BaseModel):
    n: int


@wfops.node
async def slow_from(payload: In, context) -> Out:
    with open(os.environ["WFOPS_TEST_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"n": payload.n, "key": context.idempotency_key}) + "\\n")
    hold = os.environ.get("WFOPS_TEST_HOLD_FROM")
    if hold is not None and payload.n >= int(hold):
        Path(os.environ["WFOPS_TEST_READY"], str(payload.n)).touch()
        await asyncio.sleep(3600)  # until killed
    return Out(n=payload.n * 10)
'''

FAN = """
name: fan
input: {type: object, properties: {ns: {type: array, items: {type: integer}}}}
state: {out: {type: array}}
output: {out: $state.out}
steps:
  - id: each
    foreach: $input.ns
    uses: ops.slow_from
    with: {n: $item}
    mode: parallel
    concurrency: 8
    save: state.out
    next: end
"""


def rows(db: Path, sql: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_a_killed_fanout_resumes_with_exactly_its_committed_items(tmp_path: Path) -> None:
    root = write(tmp_path / "proj", {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
                                     "ops.py": NODES, "workflows/fan.yaml": FAN,
                                     "deployments/fan.yaml": "name: fan.local\nworkflow: fan\n"})
    assert wfops(root, "compile").returncode == 0
    db, log, ready = root / ".wfops" / "wfops.db", tmp_path / "calls.log", tmp_path / "ready"
    ready.mkdir()
    ns = "ns=[0, 1, 2, 3, 4, 5, 6, 7]"
    proc = spawn(root, "run", "fan.local", "--input", ns, "--json",
                 env=env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_HOLD_FROM="4", WFOPS_TEST_READY=str(ready)))
    try:
        # Items 0-3 finish at once and are committed together; 4-7 hold until the kill.
        wait_for(lambda: len(list(ready.iterdir())) == 4, what="items 4-7 to be running")
        wait_for(lambda: db.exists() and len(rows(db, "SELECT 1 FROM trace WHERE kind='item'")) == 4,
                 what="items 0-3 to be committed")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    run_id = rows(db, "SELECT id FROM runs WHERE status='running'")[0][0]
    kept = rows(db, "SELECT step, cursor IS NOT NULL FROM trace WHERE run_id=? AND kind='item' ORDER BY seq",
                run_id)
    assert sorted(step for step, _ in kept) == [f"each[{i}]" for i in range(4)]
    assert [has for _, has in kept] == [False, False, False, True]  # one commit: its cursor on its last row

    done = wfops(root, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"out": [{"n": i * 10} for i in range(8)]}
    items = [r[0] for r in rows(db, "SELECT step FROM trace WHERE run_id=? AND kind='item'", run_id)]
    assert sorted(items) == [f"each[{i}]" for i in range(8)]  # each committed exactly once
    calls = Counter(entry["n"] for entry in read_log(log))
    assert calls == {**dict.fromkeys(range(4), 1), **dict.fromkeys(range(4, 8), 2)}  # only the lost ran again
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
