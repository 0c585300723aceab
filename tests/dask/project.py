"""A real temp project whose capabilities run on a Dask cluster.

Workers do not share the driver's environment, so what a node needs to tell the test
(its log file, where to pause) comes in its payload. Every execution of `work`'s body
is logged as one JSON line: index, attempt, idempotency key, pid.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import write
from tests.runner.helpers import wfops

OPS = '''
import json
import os
import time
from pathlib import Path

from pydantic import BaseModel

import wfops


class WorkIn(BaseModel):
    n: int
    log: str
    sleep: float = 0.0
    fail_at: int = -1
    pause_at: int = -1
    ready: str = ""
    flaky_at: int = -1
    slow_at: int = -1


class WorkOut(BaseModel):
    n: int
    pid: int
    key: str


@wfops.node
def work(payload: WorkIn, context) -> WorkOut:
    with open(payload.log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"n": payload.n, "attempt": context.attempt, "key": context.idempotency_key,
                            "pid": os.getpid()}) + "\\n")
    if payload.n == payload.fail_at:
        raise ValueError(f"bad item {payload.n}")
    if payload.n == payload.flaky_at and context.attempt == 1:
        raise ValueError(f"flaky item {payload.n}")
    if payload.n == payload.slow_at and context.attempt == 1:
        time.sleep(6)  # twice the step timeout in tests/dask/test_local_cluster.py (WIDE)
    if payload.n == payload.pause_at and context.attempt == 1:
        Path(payload.ready).write_text(str(os.getpid()))
        time.sleep(120)
    time.sleep(payload.sleep)
    return WorkOut(n=payload.n * 10, pid=os.getpid(), key=context.idempotency_key)
'''

FAN = """
name: fan
input:
  type: object
  required: [items, log]
  properties:
    items: {type: array, items: {type: integer}}
    log: {type: string}
    sleep: {type: number, default: 0}
    fail_at: {type: integer, default: -1}
    pause_at: {type: integer, default: -1}
    ready: {type: string, default: ""}
state: {out: {type: array}}
output: {out: $state.out}
steps:
  - id: fan
    foreach: $input.items
    uses: ops.work
    with: {n: $item, log: $input.log, sleep: $input.sleep, fail_at: $input.fail_at, pause_at: $input.pause_at,
           ready: $input.ready}
    mode: parallel
    concurrency: 4
    retry: {attempts: 2, backoff: 0}
    save: state.out
    next: end
"""

ONE = """
name: one
input: {type: object, required: [log], properties: {log: {type: string}, sleep: {type: number, default: 0}}}
state: {got: {type: object}}
output: {got: $state.got}
steps:
  - id: call
    uses: ops.work
    with: {n: 7, log: $input.log, sleep: $input.sleep}
    timeout: 2
    save: state.got
    next: end
"""


def make_dask_project(root: Path, address: str | None = None, ops: str = OPS) -> Path:
    """The project, compiled (its wfops.lock written). Deployments `fan.local` / `one.local`
    run locally; with `address`, `fan.dask` and `one.dask` name that cluster."""
    files = {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": ops,
        "workflows/fan.yaml": FAN,
        "workflows/one.yaml": ONE,
        "deployments/fan.yaml": "name: fan.local\nworkflow: fan\n",
        "deployments/one.yaml": "name: one.local\nworkflow: one\n",
    }
    if address:
        files["deployments/fan-dask.yaml"] = f"name: fan.dask\nworkflow: fan\nexecutor: {{kind: dask, address: '{address}'}}\n"
        files["deployments/one-dask.yaml"] = f"name: one.dask\nworkflow: one\nexecutor: {{kind: dask, address: '{address}'}}\n"
    write(root, files)
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def drifted(ops: str = OPS) -> str:
    """The same module with `work`'s input changed: another contract than the lock's."""
    return ops.replace("    ready: str = \"\"\n", "    ready: str = \"\"\n    extra: int = 0\n")


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
