"""The editor schema (`wfops schema`) and the loader agree: what one rejects, the other
rejects at the same line, and nothing the schema types strictly is coerced by the loader.

Every scalar of a full file of each kind is replaced, one at a time, by values of each
JSON type (`true` where a number goes, `'3'` where an integer goes, ...). The committed
editor schema judges each variant, and so does the loader, on the same YAML text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from wfops.loader.project import validate_document
from wfops.loader.yaml import load_yaml_text
from wfops.model.deployment import Deployment
from wfops.model.json_schema import committed_path
from wfops.model.sources import SourcesFile
from wfops.model.wftest import TestFile
from wfops.model.workflow import Workflow

WORKFLOW = {
    "name": "w",
    "version": 2,
    "description": "d",
    "input": {"type": "object"},
    "state": {"x": {"type": "array", "reducer": "append"}},
    "output": {"x": "$state.x"},
    "start": "a",
    "steps": [
        {"id": "a", "uses": "std.echo", "with": {"value": "$input.v"}, "save": {"value": "state.x"},
         "retry": {"attempts": 2, "backoff": 0.5}, "timeout": 5, "catch": {"next": "b", "save": "state.e"},
         "next": "b"},
        {"id": "b", "if": {"eq": ["$state.x", 1]}, "then": "c", "else": "d"},
        {"id": "c", "foreach": "$state.x", "uses": "std.echo", "mode": "parallel", "concurrency": 4,
         "on_item_error": "collect", "errors": "state.errs", "timeout": 1.5, "next": "d"},
        {"id": "d", "workflow": "child", "timeout": 3, "on": {"ok": "e"}},
        {"id": "e", "interrupt": "approval", "request": {"q": 1}, "on": {"approved": "f"}},
        {"id": "f", "end": "rejected"},
    ],
}
DEPLOYMENT = {"name": "d", "description": "x", "workflow": "w@sha256:abcd", "bindings": {"ops": "ops2"},
              "drift": "warn", "input": {"a": 1}, "secrets": ["TOKEN"]}
SOURCES = {"sources": {"clock": {"kind": "mcp", "command": ["python", "-m", "x"], "env": {"A": "b"},
                                 "cwd": "srv", "timeout": 10, "description": "c"},
                       "ops": {"kind": "python", "module": "examples.ops", "description": "o"}}}

WFTEST = {"workflow": "w", "deployment": "d", "cases": [
    {"name": "c", "input": {"a": 1}, "real": ["ops.y"],
     "mocks": {"ops.x": {"output": {"v": 1}, "outcome": "ok"}, "fetch": [{"error": {"type": "E", "message": "m"}},
                                                                          {"error": "timed out"}]},
     "interrupts": {"ask": {"outcome": "approved", "payload": {"by": "ana"}}},
     "expect": {"status": "completed", "outcome": "ok", "path": ["a", "end"], "state": {"x": 1},
                "error": {"type": "E"}}}]}

KINDS = {"workflow": (WORKFLOW, Workflow), "deployment": (DEPLOYMENT, Deployment), "sources": (SOURCES, SourcesFile),
         "wftest": (WFTEST, TestFile)}

#: One value of each JSON type, as a YAML scalar would give it (quoted digits are strings).
REPLACEMENTS: list[Any] = [True, "3", "0.5", 3, 0.5, None, "w"]

# Values the JSON Schema leaves open (free-form JSON) or checks only in the loader's own
# rules (a path's root, the reserved `end` id): a replacement there is not about types.
FREE = {"input", "output", "with", "request", "if", "state", "payload", "output_includes"}


def _emit(value: Any, indent: int, lines: list[str], where: tuple[Any, ...], at: dict[tuple[Any, ...], int]) -> None:
    """Block YAML, one scalar a line, recording each scalar's line (JSON scalars are YAML scalars)."""
    pad = "  " * indent
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        head = f"{pad}{key}:" if isinstance(value, dict) else f"{pad}-"
        if isinstance(item, (dict, list)) and item:
            lines.append(head)
            _emit(item, indent + 1, lines, (*where, key), at)
        else:
            lines.append(f"{head} {json.dumps(item)}")
            at[(*where, key)] = len(lines)


def _yaml(data: Any) -> tuple[str, dict[tuple[Any, ...], int]]:
    lines: list[str] = []
    at: dict[tuple[Any, ...], int] = {}
    _emit(data, 0, lines, (), at)
    return "\n".join(lines) + "\n", at


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(data))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy


def _variants(kind: str) -> list[tuple[str, tuple[Any, ...], Any]]:
    data, _ = KINDS[kind]
    _, lines = _yaml(data)
    return [(kind, path, value) for path in lines if not FREE & {p for p in path if isinstance(p, str)}
            for value in REPLACEMENTS if value != _node(data, path)]


def _node(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _schema_errors(kind: str, data: Any) -> list[Any]:
    from jsonschema import Draft7Validator

    schema = json.loads(committed_path(kind).read_text(encoding="utf-8"))
    return list(Draft7Validator(schema).iter_errors(data))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_full_files_are_valid_to_both(kind: str) -> None:
    data, model = KINDS[kind]
    text, _ = _yaml(data)
    parsed, diagnostics = validate_document(load_yaml_text(text, f"{kind}.yaml"), model)
    assert diagnostics == [] and parsed is not None
    assert _schema_errors(kind, data) == []


@pytest.mark.parametrize(("kind", "path", "value"),
                         [v for kind in sorted(KINDS) for v in _variants(kind)],
                         ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else json.dumps(v))
def test_a_value_the_schema_rejects_the_loader_rejects_at_its_line(kind: str, path: tuple[Any, ...],
                                                                    value: Any) -> None:
    data, model = KINDS[kind]
    changed = _replaced(data, path, value)
    text, lines = _yaml(changed)
    parsed, diagnostics = validate_document(load_yaml_text(text, f"{kind}.yaml"), model)
    schema_says = _schema_errors(kind, changed)
    if schema_says:
        assert parsed is None, f"the editor schema rejects {value!r} at {path}, the loader accepted it"
        assert lines[path] in {d.line for d in diagnostics}, [d.to_dict() for d in diagnostics]
    else:  # the loader's own rules (one foreach body, say) go further than a schema can, never by type
        assert parsed is not None or "wrong-type" not in {d.code for d in diagnostics}, diagnostics


@pytest.mark.parametrize(("field", "text"), [
    ("version", "version: true"), ("attempts", "    retry: {attempts: true}"),
    ("attempts", "    retry: {attempts: '3'}"), ("backoff", "    retry: {backoff: \"0.5\"}"),
    ("timeout", "    timeout: \"5\""),
])
def test_the_issue_cases_are_wrong_type_at_their_line(field: str, text: str) -> None:
    lines = ["name: w", "steps:", "  - id: a", "    uses: std.echo"]
    if field == "version":
        lines.insert(1, text)
    else:
        lines.append(text)
    doc = load_yaml_text("\n".join(lines) + "\n", "workflows/w.yaml")
    parsed, diagnostics = validate_document(doc, Workflow)
    assert parsed is None
    assert [(d.code, d.line) for d in diagnostics] == [("wrong-type", lines.index(text) + 1)]
    assert field in diagnostics[0].message
