"""A capability's own `retry`/`timeout` defaults: used by a step that gives none, overridden by
a step's own, recorded in its contract in wfops.lock, shown by `caps show`; an MCP tool's come
from sources.yaml."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.runner.helpers import as_json, wfops
from tests.runner.test_extras import MCP_FLOW, SERVER

NODES = '''
from pathlib import Path

from pydantic import BaseModel

import wfops


class In(BaseModel):
    log: str


class Out(BaseModel):
    calls: int


@wfops.node(retry={"attempts": 3, "backoff": 0, "on": ["CallFailed"]}, timeout=30)
def flaky(payload: In) -> Out:
    """Fails twice per log file, then succeeds."""
    log = Path(payload.log)
    calls = len(log.read_text().splitlines()) + 1 if log.exists() else 1
    log.write_text("x\\n" * calls)
    if calls < 3:
        raise ValueError(f"call {calls} fails")
    return Out(calls=calls)
'''


def flow(name: str, step_extra: str = "") -> str:
    return f"""
name: {name}
input: {{type: object, properties: {{log: {{type: string}}}}}}
state: {{calls: {{type: integer}}}}
output: {{calls: $state.calls}}
steps:
  - {{id: s, uses: ops.flaky, with: {{log: $input.log}}, save: {{calls: state.calls}}, next: end{step_extra}}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": NODES,
                 "workflows/plain.yaml": flow("plain"), "workflows/own.yaml": flow("own", ", retry: {attempts: 1}"),
                 "deployments/plain.yaml": "name: plain.local\nworkflow: plain\n",
                 "deployments/own.yaml": "name: own.local\nworkflow: own\n"})
    assert wfops(root, "compile").returncode == 0
    return root


def test_a_node_default_retry_is_used_and_a_steps_own_overrides_it(project: Path, tmp_path: Path) -> None:
    done = wfops(project, "run", "plain.local", "--input", f"log={json.dumps(str(tmp_path / 'a'))}", "--json")
    assert done.returncode == 0, done.stderr
    run = as_json(done)
    assert run["output"] == {"calls": 3}
    kinds = [(e["kind"], e["attempt"]) for e in as_json(wfops(project, "runs", "trace", run["run_id"], "--json"))]
    assert kinds == [("retry", 1), ("retry", 2), ("call", 3)]

    own = wfops(project, "run", "own.local", "--input", f"log={json.dumps(str(tmp_path / 'b'))}", "--json")
    assert own.returncode == 1
    assert as_json(own)["error"] == {"type": "ValueError", "message": "call 1 fails", "step": "s"}


def test_the_defaults_are_in_the_lock_and_shown(project: Path) -> None:
    lock = json.loads((project / "wfops.lock").read_text())
    contract = lock["sources"]["ops"]["capabilities"]["flaky"]
    assert contract["defaults"] == {"retry": {"attempts": 3, "backoff": 0.0, "on": ["CallFailed"], "jitter": "none"},
                                    "timeout": 30}
    shown = wfops(project, "caps", "show", "ops.flaky")
    assert 'defaults:      retry {"attempts": 3' in shown.stdout and "timeout 30" in shown.stdout
    assert as_json(wfops(project, "caps", "show", "ops.flaky", "--json"))["defaults"] == contract["defaults"]


def test_a_malformed_node_default_is_a_source_error(project: Path) -> None:
    (project / "ops.py").write_text(NODES.replace('"attempts": 3', '"attempts": 0'))
    done = wfops(project, "validate")
    assert done.returncode == 1 and "source-error" in done.stdout and "`retry`" in done.stdout, done.stdout


@pytest.mark.slow
def test_an_mcp_tools_defaults_come_from_sources_yaml_into_its_locked_contract(tmp_path: Path) -> None:
    root = tmp_path / "m"
    command = f"[{json.dumps(sys.executable)}, srv.py]"
    write(root, {"srv.py": SERVER, "workflows/mcp-extras.yaml": MCP_FLOW, "sources.yaml": f"sources:\n  srv:\n    kind: mcp\n    command: {command}\n"
                 "    tools:\n      give: {retry: {attempts: 2, on: [Timeout]}, timeout: 9}\n"})
    assert wfops(root, "compile").returncode == 0
    contract = json.loads((root / "wfops.lock").read_text())["sources"]["srv"]["capabilities"]["give"]
    assert contract["defaults"] == {"retry": {"attempts": 2, "backoff": 0.5, "on": ["Timeout"], "jitter": "none"},
                                    "timeout": 9}
    assert as_json(wfops(root, "caps", "show", "srv.give", "--json"))["defaults"] == contract["defaults"]


def test_a_changed_default_is_drift_that_says_what_changed(project: Path) -> None:
    (project / "ops.py").write_text(NODES.replace('"attempts": 3', '"attempts": 5'))
    done = wfops(project, "check")
    assert done.returncode != 0 and "capability-drift" in done.stdout, done.stdout
    assert 'default `retry`' in done.stdout and '"attempts": 5' in done.stdout
