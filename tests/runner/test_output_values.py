"""What a node returns is refused when JSON cannot carry it, never stored as something else:
a NaN or infinity in a field typed `Any` (which pydantic's JSON mode writes as null)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.runner.helpers import wfops

OPS = '''
from typing import Any

from pydantic import BaseModel

import wfops


class Kind(BaseModel):
    kind: str


class Loose(BaseModel):
    value: Any = None
    rows: list[dict[str, Any]] = []


@wfops.node
def loose(payload: Kind, context) -> Loose:
    number = float(payload.kind) if payload.kind in ("nan", "inf", "-inf") else 1.5
    if payload.kind.startswith("nested-"):
        return Loose(rows=[{"ok": 1}, {"deep": [0, float(payload.kind[7:])]}])
    return Loose(value=number)
'''

WORKFLOW = """
name: w
input: {type: object, properties: {kind: {type: string}}}
state: {got: {type: object}}
output: {got: $state.got}
steps:
  - {id: a, uses: ops.loose, with: {kind: $input.kind}, save: state.got, next: end}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("values")
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS,
                 "workflows/w.yaml": WORKFLOW, "deployments/w.yaml": "name: w.local\nworkflow: w\n"})
    assert wfops(root, "compile").returncode == 0
    return root


@pytest.mark.parametrize(("kind", "where", "shown"), [
    ("nan", "value", "nan"), ("inf", "value", "inf"), ("-inf", "value", "-inf"),
    ("nested-nan", "rows[1].deep[1]", "nan"),
])
def test_a_non_finite_number_in_an_any_field_is_refused(project: Path, kind: str, where: str, shown: str) -> None:
    done = wfops(project, "run", "w.local", "-i", f"kind={kind}", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    run = json.loads(done.stdout)
    assert run["status"] == "failed" and run["output"] is None
    assert run["error"] == {"type": "InvalidOutput", "step": "a",
                            "message": f"ops.loose output at {where}: {shown} is not a JSON number; "
                                       "a capability's output must be plain JSON"}
    trace = json.loads(wfops(project, "runs", "trace", run["run_id"], "--json").stdout)
    entries = trace if isinstance(trace, list) else trace["entries"]
    assert all(entry["output"] is None for entry in entries), entries  # nothing stored in its place
    given = project / f"{kind}.json"
    given.write_text(json.dumps({"kind": kind}))
    called = wfops(project, "caps", "call", "ops.loose", "--input-file", str(given))
    assert called.returncode != 0 and "is not a JSON number" in called.stdout + called.stderr


def test_a_finite_number_in_an_any_field_is_kept(project: Path) -> None:
    done = wfops(project, "run", "w.local", "-i", "kind=one", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == {"got": {"value": 1.5, "rows": []}}
