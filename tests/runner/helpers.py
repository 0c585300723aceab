"""A real temp project for runner tests; `wfops` in process, or as a real process where that is the point."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import write
from tests.harness import WFOPS, CliResult, process_env, run_cli

OPS = '''
"""Test nodes. `tick` logs every execution of its body (with the idempotency key) to
$WFOPS_TEST_LOG, and can stop mid-body at step $WFOPS_TEST_PAUSE_AT, signalling readiness."""

import json
import os
import time
from pathlib import Path

from pydantic import BaseModel

import wfops


class TickIn(BaseModel):
    n: int


class TickOut(BaseModel):
    n: int


@wfops.node
def tick(payload: TickIn, context) -> TickOut:
    log = os.environ.get("WFOPS_TEST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"key": context.idempotency_key, "step": context.step,
                                "n": payload.n, "pid": os.getpid()}) + "\\n")
    pause = os.environ.get("WFOPS_TEST_PAUSE_AT")
    if pause and int(pause) == payload.n:
        Path(os.environ["WFOPS_TEST_READY"]).write_text(str(os.getpid()))
        time.sleep(float(os.environ.get("WFOPS_TEST_PAUSE_FOR", "60")))
    return TickOut(n=payload.n + 1)
'''


def chain_workflow(name: str, steps: int) -> str:
    lines = [f"name: {name}",
             "input: {type: object, properties: {start: {type: integer}}}",
             "state: {n: {type: integer}}",
             "output: {n: $state.n}",
             "steps:"]
    for i in range(1, steps + 1):
        source = "$input.start" if i == 1 else "$state.n"
        nxt = "end" if i == steps else f"s{i + 1}"
        lines.append(f"  - {{id: s{i}, uses: ops.tick, with: {{n: {source}}}, save: {{n: state.n}}, next: {nxt}}}")
    return "\n".join(lines) + "\n"


APPROVAL = """
name: approval
input: {type: object, required: [change], properties: {change: {type: string}}}
state:
  decision: {type: object, required: [by], properties: {by: {type: string}}}
  message: {type: string}
output: {message: $state.message}
steps:
  - id: ask
    interrupt: approval
    request: {change: $input.change}
    resume_schema:
      type: object
      required: [by]
      additionalProperties: false
      properties: {by: {type: string, minLength: 1}}
    save: state.decision
    on: {approved: announce, rejected: no}
  - id: announce
    uses: std.format
    with: {template: "approved by {by}", values: {by: $state.decision.by}}
    save: {text: state.message}
    next: end
  - id: no
    end: rejected
"""

SECRET = """
name: secretive
input: {type: object}
state: {seen: {type: string}}
output: {seen: $state.seen}
steps:
  - id: use
    uses: std.echo
    with: {value: $secret.TOKEN}
    save: {value: state.seen}
    next: end
"""

FAILING = """
name: failing
input: {type: object}
steps:
  - id: boom
    uses: std.fail
    with: {message: kaboom}
    next: end
"""


def make_run_project(root: Path, *, chain_steps: int = 6, long_chain: int = 0) -> Path:
    files = {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": OPS,
        "workflows/chain.yaml": chain_workflow("chain", chain_steps),
        "workflows/approval.yaml": APPROVAL,
        "workflows/secretive.yaml": SECRET,
        "workflows/failing.yaml": FAILING,
        "deployments/chain.yaml": "name: chain.local\nworkflow: chain\ninput: {start: 1}\n",
        "deployments/approval.yaml": "name: approval.local\nworkflow: approval\ninput: {change: ship it}\n",
        "deployments/secretive.yaml": "name: secretive.local\nworkflow: secretive\nsecrets: [TOKEN]\n",
        "deployments/failing.yaml": "name: failing.local\nworkflow: failing\n",
    }
    if long_chain:
        files["workflows/long.yaml"] = chain_workflow("long", long_chain)
        files["deployments/long.yaml"] = "name: long.local\nworkflow: long\ninput: {start: 0}\n"
    write(root, files)
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def env_for(**extra: str) -> dict[str, str | None]:
    """What a run's environment changes: `extra` set, and no WFOPS_* variable of the outer
    environment (for `run_cli`, where None removes a variable)."""
    cleared: dict[str, str | None] = {k: None for k in os.environ if k.startswith("WFOPS_")}
    return {**cleared, **extra}


def wfops(root: Path, *args: str, env: dict[str, str | None] | None = None) -> CliResult:
    """`wfops ARGS --project ROOT` in this process (tests/harness.py), from ROOT."""
    return run_cli(*args, "--project", str(root), cwd=root, env=env or env_for())


def spawn(root: Path, *args: str, env: dict[str, str | None] | None = None) -> subprocess.Popen[str]:
    """`wfops ARGS --project ROOT` as a real process: for what only a process shows (SIGKILL,
    concurrent drivers of one store, exiting past a hung thread)."""
    return subprocess.Popen([*WFOPS, *args, "--project", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=process_env(env or env_for()), cwd=root)


def as_json(done: CliResult | subprocess.CompletedProcess[str]) -> object:
    assert done.stdout.strip(), f"no stdout; stderr: {done.stderr}"
    return json.loads(done.stdout)


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


#: A python source whose node returns a text of the size asked for (large outputs, full disks).
BLOB_OPS = '''
from pydantic import BaseModel

import wfops


class Size(BaseModel):
    size: int


class Text(BaseModel):
    text: str


@wfops.node
def blob(payload: Size, context) -> Text:
    return Text(text="x" * payload.size)
'''
