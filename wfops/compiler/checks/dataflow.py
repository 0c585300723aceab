"""Gradual data-flow types: bindings against the inputs they feed, saves against the
state fields they write. An error only where the declared types cannot overlap."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import Sink, catch_places, with_of
from wfops.compiler.checks.jsontypes import (
    NUMERIC,
    Sch,
    child,
    closed,
    describe,
    inline,
    items,
    mismatch,
    open_to_extra,
    overlaps,
    properties,
    required,
    sch,
    types_of,
)
from wfops.compiler.checks.names import suggest
from wfops.compiler.checks.paths import target_schema
from wfops.compiler.checks.scope import Scope, item_schema, safe_parse, safe_target, schema_of
from wfops.jsonvalues import json_type
from wfops.loader.project import Loaded
from wfops.model.paths import is_path

ERROR_SCHEMA = {"type": "object", "properties": {"type": {"type": "string"}, "message": {"type": "string"},
                                                 "step": {"type": "string"}}}
ITEM_ERRORS_SCHEMA = {"type": "array", "items": {"type": "object", "properties": {
    "index": {"type": "integer"}, "type": {"type": "string"}, "message": {"type": "string"}}}}
BRANCH_ERRORS_SCHEMA = {"type": "array", "items": {"type": "object", "properties": {
    "branch": {"type": "string"}, "type": {"type": "string"}, "message": {"type": "string"},
    "step": {"type": "string"}}}}


class Flow:
    """Type checks for one workflow file."""

    def __init__(self, loaded: Loaded, sink: Sink) -> None:
        self.loaded = loaded
        self.sink = sink

    # -- inputs --------------------------------------------------------------------------

    def bindings(self, index: int, with_: dict[str, Any], target: Sch | None, consumer: str, scope: Scope,
                 kind_key: str) -> None:
        """Check a step's `with` against the input schema of what it feeds."""
        if target is None:
            return
        base = ("steps", index, "with")
        props = properties(target)
        for key, value in with_.items():
            if props is not None and key not in props and not open_to_extra(target):
                self.sink.error("unknown-input", f"{consumer} has no input `{key}`", self.loaded, (*base, key),
                                hint=suggest(key, props, "remove it"), key=True)
                continue
            self.value(value, child(target, key), (*base, key), f"input `{key}` of {consumer}", scope)
        missing = [name for name in required(target) if name not in with_]
        if missing:
            raw = self.loaded.doc.data["steps"][index]
            at = base if isinstance(raw, dict) and "with" in raw else ("steps", index, kind_key)
            names = ", ".join(f"`{m}`" for m in missing)
            self.sink.error("missing-input", f"{consumer} requires input {names}, which `with` does not bind",
                            self.loaded, at, hint="add " + ", ".join(f"`{m}: <value or $path>`" for m in missing)
                            + " under `with:`", key=True)

    def value(self, value: Any, dst: Sch | None, at: tuple[Any, ...], label: str, scope: Scope) -> None:
        """One bound value (a path or a literal, at any depth) against the schema it feeds."""
        if dst is None:
            return
        if is_path(value):
            path = safe_parse(value)
            if path is None or (path.root in ("item", "index") and not scope.foreach):
                return  # reported by the path checks
            found = mismatch(schema_of(path, scope), dst)
            if found is not None:
                inner, src_t, dst_t = found
                where = f" at `{'.'.join(map(str, inner))}`" if inner else ""
                read = value + "".join(f".{p}" for p in inner)
                self.sink.error("type-mismatch", f"{label} expects {describe(dst_t)}{where}, but `{read}` is "
                                f"{describe(src_t)}", self.loaded, at,
                                hint=f"bind a value of type {describe(dst_t)}, or change the schema of the "
                                "value you bind")
            return
        literal = json_type(value)
        expected = types_of(dst)
        if not overlaps(frozenset({literal}), expected, exact=True):
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            self.sink.error("type-mismatch", f"{label} expects {describe(expected)}, but the literal {shown} is "
                            f"{literal}", self.loaded, at, hint=f"write a value of type {describe(expected)} here")
            return
        if isinstance(value, dict):
            props = properties(dst)
            for key, inner in value.items():
                if props is not None and key not in props and closed(dst):
                    self.sink.error("unknown-input", f"{label} has no field `{key}`", self.loaded, (*at, key),
                                    hint=suggest(str(key), props, "remove it"), key=True)
                    continue
                self.value(inner, child(dst, key), (*at, key), f"`{key}` of {label}", scope)
            missing = [name for name in required(dst) if name not in value]
            if missing:
                self.sink.error("missing-input", f"{label} requires field(s) {', '.join(missing)}", self.loaded,
                                at, hint="add " + ", ".join(f"`{m}:`" for m in missing))
        elif isinstance(value, list):
            for position, inner in enumerate(value):
                self.value(inner, items(dst), (*at, position), f"item {position} of {label}", scope)

    # -- outputs -------------------------------------------------------------------------

    def saves(self, index: int, save: Any, output: Sch | None, producer: str, *, as_list: bool = False,
              key: str = "save") -> None:
        """`save` names fields `output` has, and each write fits its state field. `as_list`: a
        foreach's `save`, which writes the list of item results once (`save_each` writes each)."""
        if save is None or output is None:
            return
        foreach = self.step_id(index) if as_list else None
        if isinstance(save, str):
            self.write(_listed(output) if as_list else output, save, ("steps", index, key), producer,
                       foreach=foreach)
            return
        props = properties(output)
        for field, target in save.items():
            if props is not None and field not in props and not open_to_extra(output):
                self.sink.error("unknown-output-field", f"{producer} has no output field `{field}`", self.loaded,
                                ("steps", index, key, field),
                                hint=suggest(field, props, "save one of its output fields"), key=True)
                continue
            if props is None and types_of(output) is None:
                continue
            if not as_list and props is not None and field in props:
                self.optional(index, key, field, target, props[field], required(output), producer)
            value = child(output, field)
            self.write(_listed(value) if as_list else value, target, ("steps", index, key, field),
                       f"output `{field}` of {producer}", foreach=foreach)

    def optional(self, index: int, key: str, field: str, target: str, schema: Any, needed: list[str],
                 producer: str) -> None:
        """A mapped output field the producer may leave out (not required, no default) leaves its
        state field as it was: worth a warning when that field has no default either."""
        if field in needed or (isinstance(schema, dict) and "default" in schema):
            return
        parsed = safe_target(target)
        if parsed is None:
            return
        name = parsed[0]
        declared = self.loaded.model.state.get(name)
        if declared is None or "default" in declared.json_schema():
            return
        self.sink.warning("optional-save", f"output `{field}` of {producer} is optional: a call that leaves it "
                          f"out writes nothing, and state field `{name}` has no default", self.loaded,
                          ("steps", index, key, field),
                          hint=f"give state field `{name}` a `default:`, or make `{field}` required in the "
                               "producer's output schema")

    def step_id(self, index: int) -> str:
        return str(getattr(self.loaded.model.steps[index], "id", index))

    def write(self, value: Sch | None, target: str, at: tuple[Any, ...], producer: str, *,
              foreach: str | None = None) -> None:
        """One write's type check; `foreach`: the foreach step whose `save` writes the whole list."""
        dst, reducer = target_schema(self.loaded, target)
        if reducer is None or value is None:
            return
        src_t = types_of(value)
        needs: frozenset[str] | None = None
        found = None
        if reducer == "replace":
            found = mismatch(value, dst)
        elif reducer == "append":
            found = mismatch(value, items(dst))
        elif reducer == "extend":
            needs = frozenset({"array"})
            found = mismatch(items(value), items(dst)) if overlaps(src_t, needs) else None
        elif reducer == "union":
            found = mismatch(items(value) if src_t and "array" in src_t else value, items(dst))
        elif reducer in ("add", "min", "max"):
            needs = NUMERIC
        elif reducer == "merge":
            needs = frozenset({"object"})
        if needs is not None and not overlaps(src_t, needs):
            if foreach is not None:  # a fan-out folded through a reducer wants one write per item
                self.sink.error("type-mismatch", f"`{target}` uses reducer `{reducer}`, which takes "
                                f"{describe(needs)}, but foreach step `{foreach}` saves the list of its item "
                                f"results ({producer}) in one write", self.loaded, at,
                                hint=f"use `save_each:` instead of `save:` on step `{foreach}` to write each "
                                     f"item's result through `{reducer}`")
                return
            self.sink.error("type-mismatch", f"`{target}` uses reducer `{reducer}`, which takes "
                            f"{describe(needs)}, but {producer} is {describe(src_t)}", self.loaded, at,
                            hint=f"save {describe(needs)} here, or change the field's reducer")
        elif found is not None:
            inner, got, want = found
            held = target + "".join("[]" if isinstance(p, int) else f".{p}" for p in inner)
            per = " (one item per write, reducer `" + reducer + "`)" if reducer in ("append", "union") else ""
            there = " there" if inner else ""
            hint = "change the state field's schema, or save a different output field"
            if foreach is not None and not inner and got and "array" in got:
                hint = f"use `save_each:` on foreach step `{foreach}` to write each item's result, or {hint}"
                producer = f"foreach step `{foreach}` (the list of {producer})"
            self.sink.error("type-mismatch", f"`{held}` holds {describe(want)}{per}, but {producer} gives "
                            f"{describe(got)}{there}", self.loaded, at, hint=hint)

    # -- the rest --------------------------------------------------------------------------

    def foreach_array(self, index: int, foreach: str) -> None:
        path = safe_parse(foreach)
        if path is None or path.root in ("item", "index"):
            return
        types = types_of(schema_of(path, Scope(self.loaded, "foreach")))
        if types is not None and "array" not in types:
            self.sink.error("foreach-not-array", f"`foreach: {foreach}` iterates {describe(types)}, not an array",
                            self.loaded, ("steps", index, "foreach"),
                            hint="iterate a path whose schema is `type: array`")

    def static_step(self, index: int, step: Any, children: dict[str, Loaded]) -> None:
        """Checks that do not depend on bindings: subworkflows, interrupts, catch, foreach."""
        scope = Scope(self.loaded, "with")
        foreach = getattr(step, "foreach", None)
        if foreach is not None:
            self.foreach_array(index, foreach)
            scope = Scope(self.loaded, "with", True, item_schema(self.loaded, foreach))
        name = getattr(step, "workflow", None)
        if isinstance(name, str) and name in children:
            child_wf = children[name]
            self.bindings(index, with_of(step), sch(child_wf.model.input), f"workflow `{name}`", scope, "workflow")
            self.saves(index, step.save, output_of(child_wf), f"workflow `{name}`", as_list=foreach is not None)
            if foreach is not None:
                self.saves(index, step.save_each, output_of(child_wf), f"workflow `{name}`", key="save_each")
        if hasattr(step, "resume_schema"):
            self.saves(index, step.save, sch(step.resume_schema), f"the `{step.interrupt}` resume payload")
        for at, catch in catch_places(step):
            if catch.save:
                self.write(sch(ERROR_SCHEMA), catch.save, ("steps", index, *at, "save"), "the caught error")
        if getattr(step, "errors", None):
            if getattr(step, "parallel", None) is not None:
                self.write(sch(BRANCH_ERRORS_SCHEMA), step.errors, ("steps", index, "errors"),
                           "the list of branch errors")
            else:
                self.write(sch(ITEM_ERRORS_SCHEMA), step.errors, ("steps", index, "errors"),
                           "the list of item errors")

    def call_step(self, index: int, step: Any, input_schema: dict[str, Any], output_schema: dict[str, Any], ref: str) -> None:
        foreach = getattr(step, "foreach", None)
        scope = Scope(self.loaded, "with", foreach is not None,
                      item_schema(self.loaded, foreach) if foreach is not None else None)
        self.bindings(index, with_of(step), sch(input_schema), f"`{ref}`", scope, "uses")
        self.saves(index, step.save, sch(output_schema), f"`{ref}`", as_list=foreach is not None)
        if foreach is not None:
            self.saves(index, step.save_each, sch(output_schema), f"`{ref}`", key="save_each")

    def output(self) -> None:
        model = self.loaded.model
        if not model.output or not model.output_schema:
            return
        target = sch(model.output_schema)
        props = properties(target) or {}
        for key, value in model.output.items():
            if key in props:
                self.value(value, child(target, key), ("output", key), f"`output_schema` field `{key}`",
                           Scope(self.loaded, "output"))
            elif closed(target):
                self.sink.error("unknown-output-field", f"`output_schema` does not allow output field `{key}`",
                                self.loaded, ("output", key), hint=suggest(key, props, "remove it from `output`"),
                                key=True)
        missing = [name for name in required(target) if name not in model.output]
        if missing:
            self.sink.error("missing-output", "`output_schema` requires " + ", ".join(f"`{m}`" for m in missing)
                            + ", which `output` does not project", self.loaded, ("output",),
                            hint="add " + ", ".join(f"`{m}: $state.<field>`" for m in missing) + " under `output:`",
                            key=True)


def _listed(s: Sch | None) -> Sch:
    node = {"type": "array", "items": inline(s)}
    return Sch(node, node)


def output_of(loaded: Loaded) -> Sch:
    """What a workflow returns: its `output_schema`, else the schemas its `output` paths read."""
    model = loaded.model
    if model.output_schema:
        return Sch(model.output_schema, model.output_schema)
    props: dict[str, Any] = {}
    for key, value in (model.output or {}).items():
        if is_path(value):
            path = safe_parse(value)
            props[key] = inline(schema_of(path, Scope(loaded, "output"))) if path else {}
        else:
            props[key] = {"type": json_type(value)}
    # The projection writes every key (a path that finds nothing gives null): none is optional.
    node = {"type": "object", "properties": props, "required": list(props)}
    return Sch(node, node)
