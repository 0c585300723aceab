"""A project for run control: redrive, cancel, fork, save_each, workflow timeout, parallel.

Every node appends what it did (step, idempotency key, attempt) to $WFOPS_TEST_LOG, so a
test can prove that a step ran once."""

from __future__ import annotations

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


class N(BaseModel):
    n: int


class Nap(BaseModel):
    s: float
    n: int = 0


def _log(context, **extra):
    log = os.environ.get("WFOPS_TEST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"step": context.step, "key": context.idempotency_key,
                                "attempt": context.attempt, **extra}) + "\\n")


@wfops.node
def tick(payload: N, context) -> N:
    _log(context, n=payload.n)
    return N(n=payload.n + 1)


@wfops.node
def flaky(payload: N, context) -> N:
    """Fails (a transient outage) until the file $WFOPS_TEST_HEALED exists."""
    _log(context, n=payload.n)
    if not Path(os.environ["WFOPS_TEST_HEALED"]).exists():
        raise RuntimeError("service unavailable")
    return N(n=payload.n * 10)


@wfops.node
def double(payload: N, context) -> N:
    _log(context, n=payload.n)
    return N(n=payload.n * 2)


@wfops.node
def nap(payload: Nap, context) -> N:
    """Logs its start, signals $WFOPS_TEST_READY, sleeps `s` seconds, logs its end."""
    _log(context, event="start", n=payload.n)
    ready = os.environ.get("WFOPS_TEST_READY")
    if ready:
        Path(ready).write_text(str(os.getpid()))
    time.sleep(payload.s)
    _log(context, event="end", n=payload.n)
    return N(n=payload.n + 1)
'''

REDRIVE = """
name: redrive
input: {type: object, properties: {start: {type: integer}}}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: first, uses: ops.tick, with: {n: $input.start}, save: {n: state.n}, next: outage}
  - id: outage
    uses: ops.flaky
    with: {n: $state.n}
    save: {n: state.n}
    retry: {attempts: 2, backoff: 0}
    next: last
  - {id: last, uses: ops.tick, with: {n: $state.n}, save: {n: state.n}, next: end}
"""

FORKME = """
name: forkme
input:
  type: object
  properties: {start: {type: integer}, mode: {type: string, enum: [fast, slow]}}
state: {n: {type: integer}}
output: {n: $state.n, mode: $input.mode}
steps:
  - {id: one, uses: ops.tick, with: {n: $input.start}, save: {n: state.n}, next: two}
  - {id: two, uses: ops.tick, with: {n: $state.n}, save: {n: state.n}, next: pick}
  - {id: pick, if: {eq: [$input.mode, fast]}, then: fast, else: slow}
  - {id: fast, end: fast}
  - {id: slow, end: slow}
"""

SUMMING = """
name: summing
input: {type: object, properties: {xs: {type: array, items: {type: integer}}}}
state:
  total: {type: integer, reducer: add, default: 0}
  order: {type: array, items: {type: integer}, reducer: append, default: []}
  all: {type: array}
output: {total: $state.total, order: $state.order, all: $state.all}
steps:
  - id: fan
    foreach: $input.xs
    uses: ops.double
    with: {n: $item}
    mode: parallel
    save_each: {n: state.total}
    save: state.all
    next: again
  - id: again
    foreach: $input.xs
    uses: ops.nap
    with: {s: 0, n: $item}
    mode: parallel
    save_each: {n: state.order}
    next: end
"""

TIMED = """
name: timed
timeout: 0.5
input: {type: object, properties: {s: {type: number}}}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: quick, uses: ops.tick, with: {n: 1}, save: {n: state.n}, next: sleepy}
  - {id: sleepy, uses: ops.nap, with: {s: $input.s}, save: {n: state.n}, next: end}
"""

WAITS = """
name: waits
timeout: 0.5
input: {type: object}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: ask, interrupt: approval, on: {go: work}}
  - {id: work, uses: ops.tick, with: {n: 1}, save: {n: state.n}, next: end}
"""

LONG = """
name: long
input: {type: object, properties: {s: {type: number}}}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: first, uses: ops.tick, with: {n: 1}, save: {n: state.n}, next: sleepy}
  - {id: sleepy, uses: ops.nap, with: {s: $input.s, n: $state.n}, save: {n: state.n}, next: last}
  - {id: last, uses: ops.tick, with: {n: $state.n}, save: {n: state.n}, next: end}
"""

WORKFLOWS = {"redrive": REDRIVE, "forkme": FORKME, "summing": SUMMING, "timed": TIMED, "waits": WAITS,
             "long": LONG}
INPUTS = {"redrive": "{start: 1}", "forkme": "{start: 1, mode: fast}", "summing": "{xs: [1, 2, 3, 4]}",
          "timed": "{s: 0}", "waits": "{}", "long": "{s: 0}"}


def make_runctl_project(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS}
    for name, text in WORKFLOWS.items():
        files[f"workflows/{name}.yaml"] = text
        files[f"deployments/{name}.yaml"] = f"name: {name}.local\nworkflow: {name}\ninput: {INPUTS[name]}\n"
    files.update(extra or {})
    write(root, files)
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root
