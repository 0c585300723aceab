"""`wfops schema` and the committed editor schemas it generates."""

from __future__ import annotations

import json

import pytest

from tests.harness import run_cli
from wfops.model.json_schema import DRAFT_07, KINDS, committed_path, schema_for, schema_text

REGENERATE = "python -m wfops.model.generate"

WORKFLOW = {
    "name": "w",
    "state": {"x": {"type": "string", "reducer": "append"}},
    "steps": [
        {"id": "a", "uses": "std.echo", "with": {"value": "$input.v"}, "save": {"value": "state.x"},
         "retry": {"attempts": 2}, "next": "b"},
        {"id": "b", "if": {"eq": ["$state.x", 1]}, "then": "c", "else": "d"},
        {"id": "c", "foreach": "$state.x", "workflow": "child", "mode": "parallel", "next": "e"},
        {"id": "d", "workflow": "child", "on": {"ok": "e"}},
        {"id": "e", "interrupt": "approval", "on": {"approved": "end"}},
        {"id": "f", "end": "rejected"},
    ],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_committed_schema_is_current(kind: str) -> None:
    assert committed_path(kind).read_text(encoding="utf-8") == schema_text(kind), (
        f"{committed_path(kind).name} is stale; regenerate it with: {REGENERATE}")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_schema_is_draft_07_and_deterministic(kind: str) -> None:
    from jsonschema import Draft7Validator

    schema = schema_for(kind)
    assert schema["$schema"] == DRAFT_07 and "$id" not in schema and schema["title"].startswith("wfops")
    Draft7Validator.check_schema(schema)
    assert schema_text(kind) == schema_text(kind)
    text = schema_text(kind)
    assert json.loads(text) == schema and text.endswith("}\n")


def test_workflow_schema_accepts_every_step_kind_and_flags_typos() -> None:
    from jsonschema import Draft7Validator

    validator = Draft7Validator(schema_for("workflow"))
    assert list(validator.iter_errors(WORKFLOW)) == []
    typo = {**WORKFLOW, "steps": [{"id": "a", "uses": "std.echo", "wiht": {}}]}
    assert list(validator.iter_errors(typo))
    mixed = {**WORKFLOW, "steps": [{"id": "a", "uses": "std.echo", "end": "ok"}]}
    assert list(validator.iter_errors(mixed))


def test_sources_and_deployment_schemas() -> None:
    from jsonschema import Draft7Validator

    sources = Draft7Validator(schema_for("sources"))
    good = {"sources": {"clock": {"kind": "mcp", "command": ["python", "-m", "x"]},
                        "ops": {"kind": "python", "module": "examples.ops"}}}
    assert list(sources.iter_errors(good)) == []
    assert list(sources.iter_errors({"sources": {"x": {"kind": "ftp"}}}))
    deployment = Draft7Validator(schema_for("deployment"))
    assert list(deployment.iter_errors({"name": "d", "workflow": "w@sha256:abcd", "drift": "warn"})) == []
    assert list(deployment.iter_errors({"name": "d", "workflow": "w", "drift": "ignore"}))


def test_cli_prints_the_committed_schema() -> None:
    for kind in KINDS:
        done = run_cli("schema", "--kind", kind)
        assert done.returncode == 0, done.stderr
        assert done.stdout == committed_path(kind).read_text(encoding="utf-8")
    default = run_cli("schema")
    assert default.stdout == committed_path("workflow").read_text(encoding="utf-8")


def test_cli_unknown_kind_is_usage_error() -> None:
    done = run_cli("schema", "--kind", "lock")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0] == "wfops: error: unknown schema kind 'lock'"
    assert "Traceback" not in done.stderr
