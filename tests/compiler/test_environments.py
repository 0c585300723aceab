"""Binding environments: deployments' bindings apply to their workflow and its subworkflows;
a finding is reported once, naming the deployments when only some of them produce it."""

from __future__ import annotations

import json

from tests.compiler.conftest import codes
from wfops.compiler.validate import validate_project

USES_NOTES = """
name: counter
steps:
  - id: a
    uses: notes.count
    with: {text: hi}
    next: end
"""

ALT = '''
from pydantic import BaseModel
import wfops

class In(BaseModel):
    text: str

class Out(BaseModel):
    words: int

@wfops.node(outcomes=["ok", "empty"])
def count(payload: In) -> wfops.Result[Out]:
    return wfops.Result("empty")
'''

SOURCES_WITH_ALT = """
sources:
  nodes: {kind: python, module: nodes}
  alt: {kind: python, module: alt}
  clock: {kind: mcp, command: [python, -m, mcp_server_time]}
"""


def messages(root, file):
    return [(d.code, d.line, d.column, d.message) for d in validate_project(root).diagnostics if d.file == file]


def test_unreached_workflow_uses_identity_bindings(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES})
    found = messages(root, "workflows/counter.yaml")
    assert [(c, line, col) for c, line, col, _ in found] == [("unknown-source", 4, 11)]


def test_deployment_binding_resolves_logical_source(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES,
                    "deployments/d1.yaml": "name: d1\nworkflow: counter\nbindings: {notes: nodes}\n"})
    assert validate_project(root).diagnostics == []


def test_finding_under_one_deployment_names_it_once(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES, "sources.yaml": SOURCES_WITH_ALT, "alt.py": ALT,
                    "deployments/d1.yaml": "name: d1\nworkflow: counter\nbindings: {notes: nodes}\n",
                    "deployments/d2.yaml": "name: d2\nworkflow: counter\nbindings: {notes: alt}\n"})
    found = messages(root, "workflows/counter.yaml")
    assert len(found) == 1
    code, line, col, message = found[0]
    assert (code, line, col) == ("unrouted-outcome", 3, 5)
    assert message.endswith("(under deployment `d2`)")


def test_finding_under_every_deployment_is_plain_and_single(project) -> None:
    broken = USES_NOTES.replace("with: {text: hi}", "with: {text: 3}")
    root = project({"workflows/counter.yaml": broken,
                    "deployments/d1.yaml": "name: d1\nworkflow: counter\nbindings: {notes: nodes}\n",
                    "deployments/d2.yaml": "name: d2\nworkflow: counter\nbindings: {notes: nodes}\n"})
    found = messages(root, "workflows/counter.yaml")
    assert [(c, line, col) for c, line, col, _ in found] == [("type-mismatch", 5, 18)]
    assert "under deployment" not in found[0][3]


def test_bindings_reach_subworkflows(project) -> None:
    parent = "name: parent\nsteps:\n  - id: run\n    workflow: counter\n    next: end\n"
    root = project({"workflows/counter.yaml": USES_NOTES, "workflows/parent.yaml": parent,
                    "deployments/d1.yaml": "name: d1\nworkflow: parent\nbindings: {notes: nodes}\n"})
    assert validate_project(root).diagnostics == []


def test_deployment_unknown_workflow_and_unknown_source(project) -> None:
    root = project({"deployments/d1.yaml": "name: d1\nworkflow: chlid\nbindings: {notes: nodez}\n"})
    found = messages(root, "deployments/d1.yaml")
    assert [(c, line, col) for c, line, col, _ in found] == [("unknown-workflow", 2, 11), ("unknown-source", 3, 19)]
    assert "child" in validate_project(root).diagnostics[0].hint


def test_undeclared_secret_warns_per_deployment(project) -> None:
    wf = ("name: secretive\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: $secret.TOKEN}\n"
          "    next: end\n")
    root = project({"workflows/secretive.yaml": wf,
                    "deployments/d1.yaml": "name: d1\nworkflow: secretive\nsecrets: [TOKEN]\n",
                    "deployments/d2.yaml": "name: d2\nworkflow: secretive\n"})
    found = validate_project(root).diagnostics
    assert [(d.severity, d.code, d.line, d.column) for d in found] == [("warning", "undeclared-secret", 5, 19)]
    assert "`d2`" in found[0].message and "`d1`" not in found[0].message
    assert validate_project(root).ok


def test_unreached_workflow_does_not_check_secrets(project) -> None:
    wf = ("name: secretive\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: $secret.TOKEN}\n"
          "    next: end\n")
    assert validate_project(project({"workflows/secretive.yaml": wf})).diagnostics == []


CLOCK = """
name: clock-user
steps:
  - id: now
    uses: clock.get_current_time
    with: {timezone: 3}
    next: end
"""


def _lock(capabilities: dict) -> str:
    return json.dumps({"version": 1, "workflows": {}, "deployments": {},
                       "sources": {"clock": {"kind": "mcp", "capabilities": capabilities}}})


def test_mcp_contracts_come_from_the_lock(project) -> None:
    contract = {"input_schema": {"type": "object", "required": ["timezone"],
                                 "properties": {"timezone": {"type": "string"}}},
                "output_schema": {"type": "object"}, "outcomes": ["ok"], "description": "", "hash": "x"}
    root = project({"workflows/clock.yaml": CLOCK, "wfops.lock": _lock({"get_current_time": contract})})
    assert codes(validate_project(root).diagnostics) == [("type-mismatch", 5, 22)]


def test_mcp_capability_missing_from_lock_is_contract_unknown(project) -> None:
    root = project({"workflows/clock.yaml": CLOCK, "wfops.lock": _lock({})})
    found = validate_project(root).diagnostics
    assert [(d.severity, d.code, d.line) for d in found] == [("warning", "contract-unknown", 4)]


def test_corrupt_lock_is_a_finding(project) -> None:
    root = project({"workflows/clock.yaml": CLOCK, "wfops.lock": "{not json"})
    found = validate_project(root).diagnostics
    assert ("corrupt-lock", "wfops.lock") in [(d.code, d.file) for d in found]


def test_broken_python_source_is_reported_once_at_sources_yaml(project) -> None:
    root = project({"nodes.py": "raise RuntimeError('boom')\n",
                    "workflows/counter.yaml": USES_NOTES.replace("notes.count", "nodes.count")})
    found = validate_project(root).diagnostics
    assert [(d.code, d.file) for d in found] == [("source-import-error", "sources.yaml")]


def test_broken_child_file_is_not_an_unknown_workflow(project) -> None:
    parent = "name: parent\nsteps:\n  - id: run\n    workflow: kid\n    next: end\n"
    root = project({"workflows/parent.yaml": parent, "workflows/kid.yaml": "name: kid\nsteps: 3\n"})
    found = validate_project(root).diagnostics
    assert {d.file for d in found} == {"workflows/kid.yaml"}


def test_two_workflow_cycle_is_reported_in_both_files(project) -> None:
    a = "name: a\nsteps:\n  - id: call\n    workflow: b\n    next: end\n"
    b = "name: b\nsteps:\n  - id: call\n    workflow: a\n    next: end\n"
    found = validate_project(project({"workflows/a.yaml": a, "workflows/b.yaml": b})).diagnostics
    assert [(d.code, d.file, d.line, d.column) for d in found] == [
        ("subworkflow-cycle", "workflows/a.yaml", 4, 15), ("subworkflow-cycle", "workflows/b.yaml", 4, 15)]
    assert "a -> b -> a" in found[0].message


def test_diagnostics_are_sorted(project) -> None:
    root = project({"workflows/z.yaml": USES_NOTES.replace("counter", "z"),
                    "workflows/a.yaml": "name: a\nstart: nope\nsteps:\n  - id: x\n    end: y\n"})
    found = validate_project(root).diagnostics
    assert [(d.file, d.line) for d in found] == sorted((d.file, d.line) for d in found)
    assert found[0].file == "workflows/a.yaml"


def test_worked_examples_of_the_repo_are_clean() -> None:
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    found = [d for d in validate_project(repo).diagnostics if d.is_error]
    assert found == [], found


def test_deployment_input_defaults_are_type_checked(project) -> None:
    wf = ("name: w\ninput:\n  type: object\n  additionalProperties: false\n  properties: {n: {type: integer}}\n"
          "steps:\n  - id: a\n    end: x\n")
    root = project({"workflows/w.yaml": wf, "deployments/d.yaml": "name: d\nworkflow: w\ninput: {n: many, m: 1}\n"})
    found = [(d.code, d.file, d.line, d.column) for d in validate_project(root).diagnostics]
    assert found == [("type-mismatch", "deployments/d.yaml", 3, 12), ("unknown-input", "deployments/d.yaml", 3, 18)]


def test_broken_sources_yaml_does_not_make_every_source_unknown(project) -> None:
    root = project({"sources.yaml": "sources: [oops\n", "workflows/counter.yaml": USES_NOTES.replace("notes.", "nodes."),
                    "deployments/d.yaml": "name: d\nworkflow: counter\nbindings: {nodes: elsewhere}\n"})
    found = validate_project(root).diagnostics
    assert [(d.code, d.file) for d in found] == [("yaml-syntax", "sources.yaml")]


def test_lock_only_project_knows_std_only(tmp_path) -> None:
    from tests.conftest import write

    root = write(tmp_path, {"wfops.lock": '{"version": 1, "workflows": {}, "deployments": {}, "sources": {}}\n',
                            "workflows/counter.yaml": USES_NOTES})
    found = validate_project(root).diagnostics
    assert [(d.code, d.line) for d in found] == [("unknown-source", 4)]
