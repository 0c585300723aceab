"""The plain loader (no pydantic) never says yes where the pydantic models say no, and what it
builds is what the models build, field by field and type by type.

It may say "not sure" (None) where the models accept: that only costs time. These tests
also show it is sure of the files users write, or it would save nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from tests.model.test_editor_agrees import (
    DEPLOYMENT,
    SOURCES,
    WORKFLOW,
    _replaced,
    _variants,
    _yaml,
)
from wfops.loader.yaml import load_yaml_file, load_yaml_text
from wfops.model import plain
from wfops.model.deployment import Deployment
from wfops.model.json_schema import committed_path
from wfops.model.objects import ROOTS, PlainModel
from wfops.model.sources import SourcesFile
from wfops.model.workflow import Workflow

REPO = Path(__file__).resolve().parents[2]
MODELS: dict[str, type[BaseModel]] = {"workflow": Workflow, "deployment": Deployment, "sources": SourcesFile}
FULL = {"workflow": WORKFLOW, "deployment": DEPLOYMENT, "sources": SOURCES}

PARALLEL = {"name": "p", "state": {"n": {"type": "integer", "reducer": "add", "default": 0}}, "steps": [
    {"id": "fan", "parallel": {"a": [{"id": "a1", "uses": "std.echo", "save": "state.n"}],
                               "b": [{"id": "b1", "workflow": "child", "with": {"x": 1}}]},
     "on_branch_error": "collect", "errors": "state.errs", "timeout": 2, "catch": {"next": "done"},
     "next": "done"},
    {"id": "each", "foreach": "$input.items", "workflow": "child", "save_each": "state.n",
     "retry": {"attempts": 5}},
    {"id": "ask", "interrupt": "approval", "resume_schema": {"type": "object"}, "save": {"ok": "state.ok"},
     "on": {"approved": "done"}},
    {"id": "done", "end": "ok"}]}
DASK = {"name": "d2", "workflow": "w", "executor": {"kind": "dask", "address": "tcp://h:8786"}}
HTTP = {"sources": {"web": {"kind": "mcp", "url": "https://x.example/mcp"}}}


def tree(value: Any) -> Any:
    """A model or plain object as comparable data: class name, fields, extras; scalars keep
    their type (a float field must hold 5.0 in both, not 5 in one)."""
    if isinstance(value, BaseModel | PlainModel):
        return (type(value).__name__, tree(dict(value.__dict__)), tree(value.model_extra))
    if isinstance(value, dict):
        return {key: tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tree(item) for item in value]
    return (type(value).__name__, value)


def pydantic_result(kind: str, data: Any) -> BaseModel | None:
    try:
        return MODELS[kind].model_validate(data)
    except ValidationError:
        return None


def assert_sound(kind: str, data: Any) -> bool:
    """Whatever the plain loader accepts, the models accept, into the same objects."""
    built = plain.load(kind, data)
    if built is None:
        return False
    model = pydantic_result(kind, data)
    assert model is not None, f"the plain loader accepted what the models reject: {json.dumps(data)[:300]}"
    assert tree(built) == tree(model)
    return True


def _repo_files() -> list[tuple[str, Path]]:
    found = [("sources", REPO / "sources.yaml")]
    found += [("workflow", p) for p in sorted((REPO / "workflows").glob("*.yaml"))]
    found += [("deployment", p) for p in sorted((REPO / "deployments").glob("*.yaml"))]
    return found


@pytest.mark.parametrize(("kind", "data"), [*FULL.items(), ("workflow", PARALLEL), ("deployment", DASK),
                                            ("sources", HTTP)], ids=lambda v: v if isinstance(v, str) else "")
def test_full_files_load_plainly_into_what_the_models_build(kind: str, data: Any) -> None:
    text, _ = _yaml(data)
    assert assert_sound(kind, load_yaml_text(text, f"{kind}.yaml").data)


@pytest.mark.parametrize(("kind", "path"), _repo_files(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_the_worked_examples_load_plainly(kind: str, path: Path) -> None:
    assert assert_sound(kind, load_yaml_file(path).data)


@pytest.mark.parametrize(("kind", "path", "value"), [v for kind in sorted(FULL) for v in _variants(kind)],
                         ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else json.dumps(v))
def test_a_changed_value_is_never_a_wrong_yes(kind: str, path: tuple[Any, ...], value: Any) -> None:
    changed = _replaced(FULL[kind], path, value)
    assert_sound(kind, changed)
    if pydantic_result(kind, changed) is None:
        assert plain.load(kind, changed) is None


@pytest.mark.parametrize(("kind", "change"), [
    ("workflow", {"steps": [{"id": "end", "end": "ok"}]}),                            # reserved id
    ("workflow", {"steps": [{"id": "a", "uses": "s.x", "next": "b", "on": {"ok": "c"}}]}),  # conflicting routes
    ("workflow", {"steps": [{"id": "a", "foreach": "$input.x", "uses": "s.x", "workflow": "c"}]}),
    ("workflow", {"steps": [{"id": "a", "foreach": "$input.x"}]}),
    ("workflow", {"steps": [{"id": "a", "parallel": {"b": []}}]}),                   # an empty branch
    ("workflow", {"steps": [{"id": "a", "parallel": {"no way": [{"id": "x", "end": "ok"}]}}]}),  # branch name
    ("workflow", {"steps": [{"id": "a", "if": {"and": []}, "then": "b", "else": "c"}]}),
    ("workflow", {"steps": [{"id": "a", "if": {"eq": ["$state.x"]}, "then": "b", "else": "c"}]}),
    ("workflow", {"name": "w\n"}),                                                    # `$` before a newline
    ("workflow", {"steps": [{"id": "a", "uses": "s.x", "timeout": True}]}),
    ("workflow", {"steps": [{"id": "a", "uses": "s.x", "retry": {"attempts": 2.0}}]}),
    ("workflow", {"steps": [{"id": "a", "uses": "s.x", "on": {1: "b"}}]}),            # a key that is not text
    ("deployment", {"bindings": {"std": "x"}}),
    ("deployment", {"executor": {"kind": "dask"}}),
    ("sources", {"sources": {"std": {"kind": "python", "module": "m"}}}),
    ("sources", {"sources": {"m": {"kind": "mcp", "command": "python -m s"}}}),
    ("sources", {"sources": {"m": {"kind": "mcp", "command": ["s"], "cwd": "../out"}}}),
    ("sources", {"sources": {"m": {"kind": "mcp", "command": ["s"], "url": "http://x"}}}),
    ("sources", {"sources": {"m": {"kind": "mcp", "url": "http://x", "env": {"A": "b"}}}}),
])
def test_what_the_models_reject_the_plain_loader_leaves_to_them(kind: str, change: dict[str, Any]) -> None:
    data = {**FULL[kind], **change}
    assert pydantic_result(kind, data) is None
    assert plain.load(kind, data) is None


def test_a_form_it_does_not_decide_is_left_to_the_models() -> None:
    data = {**WORKFLOW, "steps": [{"id": "a", "uses": "s.x", "with_": {}}]}  # a field by its python name
    assert pydantic_result("workflow", data) is not None
    assert plain.load("workflow", data) is None


def test_a_definition_it_cannot_compile_leaves_the_file_to_the_models() -> None:
    # Definitions are compiled when a value first reaches one. One this loader cannot compile
    # (a keyword it does not know) must send the whole file to the models, even when reached
    # inside a union, where "this alternative does not fit" would let another one take it.
    schema = json.loads(committed_path("workflow").read_text(encoding="utf-8"))
    for definition in schema["$defs"].values():
        definition["x-unknown"] = True
    check = plain._Compiler(schema["$defs"]).model(schema, ROOTS["workflow"])
    with pytest.raises(plain._Undecided):
        check(WORKFLOW)
    assert plain.load("workflow", WORKFLOW) is not None  # the committed schema compiles


KEYS = ["name", "id", "uses", "with", "save", "next", "on", "retry", "attempts", "backoff", "catch", "if", "then",
        "else", "foreach", "workflow", "interrupt", "end", "mode", "state", "reducer", "steps", "kind", "timeout",
        "command", "url", "env", "cwd", "sources", "bindings", "drift", "executor", "address", "ok", "eq", "and",
        "std", "parallel", "a", "type", "default", "save_each", "concurrency", "on_item_error", "errors"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 1001), st.floats(-1, 5, allow_nan=False),
                    st.sampled_from(["std.echo", "state.x", "$state.x", "$$x", "end", "a", "", "Bad Id", "python",
                                     "mcp", "dask", "local", "fail", "warn", "parallel", "serial", "collect",
                                     "append", "w@sha256:abcd", "tcp://h:1", "http://x", "../x", "A", "a\n"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)), max_leaves=12)


def _paths(data: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at] if at else []
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, item in items:
        found += _paths(item, (*at, key))
    return found


FULL_AND_MORE = [("workflow", WORKFLOW), ("workflow", PARALLEL), ("deployment", DEPLOYMENT), ("deployment", DASK),
                 ("sources", SOURCES), ("sources", HTTP)]


@pytest.mark.slow  # hundreds of generated documents
@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FULL_AND_MORE), st.data())
def test_random_edits_are_never_a_wrong_yes(start: tuple[str, Any], data: st.DataObject) -> None:
    kind, document = start
    changed = json.loads(json.dumps(document))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(changed)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = changed
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[path[-1]] = data.draw(VALUES)
        elif action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][data.draw(st.sampled_from(KEYS))] = data.draw(VALUES)
    assert_sound(kind, changed)



@pytest.mark.parametrize("label", [1, 1.5, "1.5"])
def test_a_version_label_is_any_number_or_string_and_keeps_its_type(label: Any) -> None:
    data = {"name": "w", "version": label, "steps": [{"id": "a", "end": "ok"}]}
    assert assert_sound("workflow", data)  # the plain loader takes it, as the models do
    built = plain.load("workflow", data)
    assert built is not None and type(built.version) is type(label)
