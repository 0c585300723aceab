"""A real temp project whose node counts its calls: the step cache's tests and benchmark."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import write
from tests.runner.helpers import as_json, env_for, wfops

#: `slow` appends one line per call of its body to $WFOPS_TEST_LOG (the side-effect counter),
#: and with $WFOPS_TEST_READY set, writes that file and sleeps (a process to SIGKILL mid-call);
#: `flaky` fails while $WFOPS_TEST_FAIL names an existing file; `helper.shout` is a project
#: module the node uses, so editing it changes the node's code hash.
OPS = '''
import json
import os
import time
from pathlib import Path

from pydantic import BaseModel

import wfops
from helper import shout


class In(BaseModel):
    text: str
    date: str | None = None


class Out(BaseModel):
    text: str


def _log(name: str, payload: In) -> None:
    log = os.environ.get("WFOPS_TEST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"node": name, "text": payload.text}) + "\\n")


@wfops.node
def slow(payload: In) -> Out:
    _log("slow", payload)
    ready = os.environ.get("WFOPS_TEST_READY")
    if ready:
        Path(ready).write_text(str(os.getpid()))
        time.sleep(60)
    return Out(text=shout(payload.text))


@wfops.node(cache="1h")
def cheap(payload: In) -> Out:
    _log("cheap", payload)
    return Out(text=payload.text)


@wfops.node
def flaky(payload: In) -> Out:
    _log("flaky", payload)
    marker = os.environ.get("WFOPS_TEST_FAIL")
    if marker and Path(marker).exists():
        raise RuntimeError("flaky failed")
    return Out(text=payload.text)
'''

HELPER = '''
def shout(text: str) -> str:
    return text.upper()
'''


def workflow(name: str, uses: str, cache: str = "{ttl: 1d}", extra: str = "") -> str:
    return f"""
name: {name}
input: {{type: object, properties: {{text: {{type: string}}, date: {{type: string}}}}}}
state: {{text: {{type: string}}}}
output: {{text: $state.text}}
steps:
  - id: work
    uses: {uses}
    with: {{text: $input.text, date: $input.date}}
    cache: {cache}
    save: {{text: state.text}}
    next: tail{extra}
  - id: tail
    uses: std.echo
    with: {{value: $state.text}}
    next: end
"""


def make_cache_project(root: Path) -> Path:
    write(root, {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": OPS,
        "helper.py": HELPER,
        "workflows/cached.yaml": workflow("cached", "ops.slow"),
        "workflows/keyed.yaml": workflow("keyed", "ops.slow", "{ttl: 1d, key: $input.date}").replace(
            "with: {text: $input.text, date: $input.date}", "with: {text: $input.text}"),
        "workflows/flaky.yaml": workflow("flaky", "ops.flaky"),
        "workflows/default.yaml": workflow("default", "ops.cheap", "null"),
        "workflows/off.yaml": workflow("off", "ops.cheap", "false"),
        "deployments/cached.yaml": "name: cached.local\nworkflow: cached\ninput: {text: hi}\n",
        "deployments/keyed.yaml": "name: keyed.local\nworkflow: keyed\ninput: {text: hi, date: d1}\n",
        "deployments/flaky.yaml": "name: flaky.local\nworkflow: flaky\ninput: {text: hi}\n",
        "deployments/default.yaml": "name: default.local\nworkflow: default\ninput: {text: hi}\n",
        "deployments/off.yaml": "name: off.local\nworkflow: off\ninput: {text: hi}\n",
    })
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def calls(log: Path) -> list[dict[str, str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def run_json(root: Path, deployment: str, *args: str, log: Path, **env: str) -> dict:
    done = wfops(root, "run", deployment, "--json", *args, env=env_for(WFOPS_TEST_LOG=str(log), **env))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    found = as_json(done)
    assert isinstance(found, dict)
    return found


def trace(root: Path, run_id: str) -> list[dict]:
    done = wfops(root, "runs", "trace", run_id, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = as_json(done)
    assert isinstance(found, list)
    return found


def db_of(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".wfops" / "wfops.db")
