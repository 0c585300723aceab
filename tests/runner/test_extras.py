"""Extras: what a node returns beside its output is kept in the trace entry (and shown by
`runs trace`), and never reaches state: not through `save:`, not as `$state.x.<key>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write
from tests.runner.helpers import as_json, wfops

NODES = '''
from pydantic import BaseModel, ConfigDict

import wfops


class In(BaseModel):
    text: str


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: str


class Seen(BaseModel):
    seen: object = None


@wfops.node
def tagged(payload: In) -> wfops.Result[Out]:
    # `hidden`: a key the output model allows but does not declare; `tokens`: extra data.
    return wfops.Result("ok", Out(text=payload.text, hidden="h"), extra={"tokens": 12})


@wfops.node
def look(payload: Seen) -> Seen:
    return Seen(seen=payload.seen)
'''

FLOW = """
name: extras
state:
  x: {type: object}
  text: {type: string}
  seen: {}
output: {x: $state.x, text: $state.text, seen: $state.seen}
steps:
  - {id: tag, uses: ops.tagged, with: {text: hi}, save: state.x, next: again}
  - {id: again, uses: ops.tagged, with: {text: yo}, save: {text: state.text}, next: peek}
  - {id: peek, uses: ops.look, with: {seen: $state.x.hidden}, save: {seen: state.seen}, next: end}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": NODES,
                 "workflows/extras.yaml": FLOW, "deployments/extras.yaml": "name: extras.local\nworkflow: extras\n"})
    assert wfops(root, "compile").returncode == 0
    return root


def test_extras_are_in_the_trace_and_unreachable_from_later_steps(project: Path) -> None:
    done = wfops(project, "run", "extras.local", "--json")
    assert done.returncode == 0, done.stderr
    run = as_json(done)
    assert run["output"] == {"x": {"text": "hi"}, "text": "yo", "seen": None}  # `hidden` never saved
    trace = as_json(wfops(project, "runs", "trace", run["run_id"], "--json"))
    tag = trace[0]
    assert tag["output"] == {"text": "hi"}
    assert tag["extra"] == {"tokens": 12, "hidden": "h"}
    assert tag["state_changes"] == [{"path": "state.x", "value": {"text": "hi"}}]
    assert trace[2]["input"] == {"seen": None}  # `$state.x.hidden` finds nothing
    assert trace[2]["extra"] is None
    text = wfops(project, "runs", "trace", run["run_id"])
    assert "extra: tokens=12, hidden=" in text.stdout
