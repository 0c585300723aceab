"""Where values with paths stand in a workflow, and the schema each path reads."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any, NamedTuple

from wfops.compiler.checks.context import with_of
from wfops.compiler.checks.jsontypes import Sch, child, sch
from wfops.loader.project import Loaded
from wfops.model.paths import PathSyntaxError, ValuePath, is_path, parse_path, parse_save_target

CONTEXT_FIELDS = {"run_id": "string", "workflow": "string", "deployment": "string", "step": "string",
                  "attempt": "integer", "idempotency_key": "string"}


# NamedTuples, not dataclasses: a dataclass costs ~1 ms to create at import (its methods are
# compiled from source), and `wfops validate` starts cold on every commit.
class Scope(NamedTuple):
    loaded: Loaded
    where: str              # with | foreach | request | if | output
    foreach: bool = False   # inside a foreach step's `with`: $item and $index are allowed
    item: Sch | None = None  # the schema of $item when known


class Site(NamedTuple):
    """One value that may hold paths, at document path `at`."""

    at: tuple[Any, ...]
    value: Any
    scope: Scope


def state_schema(loaded: Loaded, field: str) -> Sch | None:
    declared = loaded.model.state.get(field)
    return sch(declared.json_schema()) if declared is not None else None


def walk(s: Sch | None, parts: tuple[Any, ...]) -> Sch | None:
    for part in parts:
        s = child(s, part)
        if s is None:
            return None
    return s


@lru_cache(maxsize=8192)
def safe_parse(text: str) -> ValuePath | None:
    """Parsed once per distinct text: the same paths recur across steps, files and passes."""
    try:
        return parse_path(text)
    except PathSyntaxError:
        return None


@lru_cache(maxsize=8192)
def safe_target(text: str) -> tuple[str, tuple[str, ...]] | None:
    """A save target (`state.field.key`) as (field, keys), None when it is not one; parsed once
    per distinct text: the path, data-flow and write checks each read every target."""
    try:
        return parse_save_target(text)
    except PathSyntaxError:
        return None


def schema_of(path: ValuePath, scope: Scope) -> Sch | None:
    """The schema a path reads, or None when unknown."""
    model = scope.loaded.model
    if path.root == "input":
        return walk(sch(model.input), path.parts)
    if path.root == "state":
        if not path.parts or not isinstance(path.parts[0], str):
            return None
        return walk(state_schema(scope.loaded, path.parts[0]), path.parts[1:])
    if path.root == "context":
        kind = CONTEXT_FIELDS.get(str(path.parts[0])) if len(path.parts) == 1 else None
        return sch({"type": kind}) if kind else None
    if path.root == "item":
        return walk(scope.item, path.parts)
    if path.root == "index":
        return sch({"type": "integer"})
    if path.root == "secret":
        return sch({"type": "string"})
    return None


def item_schema(loaded: Loaded, foreach: str) -> Sch | None:
    path = safe_parse(foreach) if is_path(foreach) else None
    if path is None:
        return None
    return child(schema_of(path, Scope(loaded, "foreach")), 0)


def sites(loaded: Loaded) -> Iterator[Site]:
    """Every value of a workflow that may hold paths."""
    # One scope of each kind per file (a scope is a value), but a foreach's: its item's schema.
    plain, conditions, requests = Scope(loaded, "with"), Scope(loaded, "if"), Scope(loaded, "request")
    for index, step in enumerate(loaded.model.steps):
        base = ("steps", index)
        foreach = getattr(step, "foreach", None)
        if foreach is not None:
            yield Site((*base, "foreach"), foreach, Scope(loaded, "foreach"))
            yield Site((*base, "with"), with_of(step), Scope(loaded, "with", True, item_schema(loaded, foreach)))
        elif hasattr(step, "with_"):
            yield Site((*base, "with"), step.with_, plain)
        if hasattr(step, "request"):
            yield Site((*base, "request"), step.request, requests)
        if hasattr(step, "if_"):
            yield Site((*base, "if"), step.if_, conditions)
        for name, condition in (getattr(step, "when", None) or {}).items():  # a conditional branch's
            yield Site((*base, "when", name), condition, conditions)
    if loaded.model.output is not None:
        yield Site(("output",), loaded.model.output, Scope(loaded, "output"))
