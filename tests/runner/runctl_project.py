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


class Gate(BaseModel):
    tag: str
    arrive: str | None = None
    wait: str | None = None


class Tag(BaseModel):
    tag: str


@wfops.node
def gate(payload: Gate, context) -> Tag:
    """Logs its start; creates $WFOPS_TEST_DIR/<arrive>; waits for $WFOPS_TEST_DIR/<wait> (made
    by another branch, or by the test); logs its end. Order by events, never by timing."""
    _log(context, event="start", tag=payload.tag)
    where = Path(os.environ["WFOPS_TEST_DIR"])
    if payload.arrive:
        (where / payload.arrive).write_text("here")
    if payload.wait:
        deadline = time.monotonic() + float(os.environ.get("WFOPS_TEST_WAIT", "30"))
        while not (where / payload.wait).exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{payload.tag}: {payload.wait} never came (the branches did not overlap)")
            time.sleep(0.01)
    _log(context, event="end", tag=payload.tag)
    return Tag(tag=payload.tag)


@wfops.node
def nap(payload: Nap, context) -> N:
    """Logs its start, signals $WFOPS_TEST_READY, sleeps `s` seconds, logs its end.

    With $WFOPS_TEST_AWAKE set it does not sleep: a resume re-runs the nap that was in
    flight, and its stored input still says 60 s."""
    _log(context, event="start", n=payload.n)
    ready = os.environ.get("WFOPS_TEST_READY")
    if ready:
        Path(ready).write_text(str(os.getpid()))
    if not os.environ.get("WFOPS_TEST_AWAKE"):
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

PAR = """
name: par
input: {type: object}
state:
  tags: {type: array, items: {type: string}, reducer: append, default: []}
  last: {type: string}
output: {tags: $state.tags, last: $state.last}
steps:
  - id: both
    parallel:
      b:  # finishes first: its last step opens the gate branch a waits at
        - {id: meet, uses: ops.gate, with: {tag: b1, wait: a-here}, save: {tag: state.tags}, next: last}
        - {id: last, uses: ops.gate, with: {tag: b2, arrive: b-done}, save: {tag: state.tags}, next: end}
      a:
        - {id: meet, uses: ops.gate, with: {tag: a1, arrive: a-here, wait: b-done}, save: {tag: state.tags},
           next: slow}
        - {id: slow, uses: ops.gate, with: {tag: a2, arrive: a2-started, wait: release},
           save: {tag: state.last}, next: end}
    next: end
"""

WORKFLOWS = {"redrive": REDRIVE, "forkme": FORKME, "summing": SUMMING, "timed": TIMED, "waits": WAITS,
             "long": LONG, "par": PAR}
INPUTS = {"redrive": "{start: 1}", "forkme": "{start: 1, mode: fast}", "summing": "{xs: [1, 2, 3, 4]}",
          "timed": "{s: 0}", "waits": "{}", "long": "{s: 0}", "par": "{}"}


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
