"""Every path's root is valid where it stands, `$state` paths name declared fields,
and `save` targets write to a declared field (or under an object field)."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import Sink, catch_places
from wfops.compiler.checks.jsontypes import Sch, child, closed, describe, properties, sch, types_of
from wfops.compiler.checks.names import suggest
from wfops.compiler.checks.scope import CONTEXT_FIELDS, Scope, safe_parse, safe_target, sites
from wfops.diagnostics import Severity
from wfops.loader.project import Loaded
from wfops.model.paths import PathSyntaxError, iter_paths, parse_path, parse_save_target

_WHERE = {"with": "the `with` of a step that is not a foreach", "foreach": "the `foreach` expression", "request": "`request`",
          "if": "a condition", "output": "`output`"}


def check_paths(loaded: Loaded, sink: Sink) -> None:
    # A file reads the same few paths in many places (`$input.url` in most steps): each text is
    # judged once per place kind (an `$item` path by its foreach's item schema, so every time).
    judged: dict[tuple[str, str, bool], Problem | None] = {}
    for site in sites(loaded):
        scope = site.scope
        for inner, text in iter_paths(site.value):
            if text.startswith("$item"):
                problem = _path_problem(loaded, text, scope)
            else:
                known = (text, scope.where, scope.foreach)
                if known in judged:
                    problem = judged[known]
                else:
                    problem = judged[known] = _path_problem(loaded, text, scope)
            if problem is not None:
                severity, code, message, hint = problem
                sink.add(severity, code, message, loaded, (*site.at, *inner), hint)
    for at, target in save_targets(loaded):
        _check_target(loaded, at, target, sink)


#: What is wrong with a path: (severity, code, message, hint).
Problem = tuple[Severity, str, str, str]


def save_targets(loaded: Loaded) -> list[tuple[tuple[Any, ...], str]]:
    """(document path, `state.x.y`) for every write a step makes."""
    found: list[tuple[tuple[Any, ...], str]] = []
    for index, step in enumerate(loaded.model.steps):
        found += [(("steps", index, *at), target) for at, target in step_writes(step)]
    return found


def step_writes(step: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(document path below the step, `state.x.y`) for every write one step makes."""
    found: list[tuple[tuple[Any, ...], str]] = []
    for name in ("save", "save_each"):
        save = getattr(step, name, None)
        if isinstance(save, str):
            found.append(((name,), save))
        elif isinstance(save, dict):
            found += [((name, key), target) for key, target in save.items()]
    if getattr(step, "catch", None) is not None:
        found += [((*at, "save"), catch.save) for at, catch in catch_places(step) if catch.save]
    if getattr(step, "errors", None):
        found.append((("errors",), step.errors))
    return found


def _path_problem(loaded: Loaded, text: str, scope: Scope) -> Problem | None:
    path = safe_parse(text)
    if path is None:
        problem = "not a path"
        try:
            parse_path(text)
        except PathSyntaxError as exc:
            problem = str(exc)
        return ("error", "invalid-path", f"`{text}`: {problem}",
                "paths look like `$input.a`, `$state.x.0`, `$context.run_id`, `$item`, `$index`, "
                "`$secret.NAME`; write `$$` for a literal `$`")
    where = _WHERE[scope.where]
    if path.root in ("item", "index") and not scope.foreach:
        return ("error", "path-not-allowed",
                f"`{text}` is only defined inside a foreach step's `with`, not in {where}",
                "move it into the `with` of a foreach step, or read the value from `$state`")
    if path.root == "secret" and scope.where == "output":
        return ("error", "path-not-allowed", f"`{text}`: secrets cannot be part of a workflow's output",
                "remove it from `output`; pass secrets only to the steps that need them")
    if path.root == "context":
        name = path.parts[0] if path.parts else None
        if len(path.parts) != 1 or name not in CONTEXT_FIELDS:
            return ("error", "invalid-path", f"`{text}` is not a context field",
                    suggest(str(name or ""), CONTEXT_FIELDS, "use `$context.<field>`"))
        return None
    if path.root == "state":
        return _state_path_problem(loaded, text, path.parts)
    if path.root == "input":
        return _input_path_problem(loaded, text, path.parts)
    if path.root == "item" and scope.item is not None:
        nested = _nested_problem(scope.item, "$item", path.parts, reading=True)
        if nested is not None:
            return ("error", nested[0], f"`{text}`: {nested[1]}", nested[2])
    return None


def _input_path_problem(loaded: Loaded, text: str, parts: tuple[Any, ...]) -> Problem | None:
    """A typo in `$input.x` is likely. Under a closed schema (`additionalProperties: false`) no
    run can pass `x`, so it is an error; otherwise a run may pass it, and it only warns."""
    schema = sch(loaded.model.input)
    props = properties(schema)
    if parts and isinstance(parts[0], str) and props is not None and parts[0] not in props:
        message = f"`{text}` reads input `{parts[0]}`, which the `input` schema does not declare"
        hint = suggest(parts[0], props, "declare it under `input.properties`")
        if not closed(schema):
            return ("warning", "undeclared-input", message + " (it is null unless a run passes it)", hint)
        return ("error", "undeclared-input", message + " (so it is always null)", hint)
    problem = _nested_problem(schema, "$input", parts, reading=True)
    if problem is not None and problem[0] == "invalid-path":
        return ("error", problem[0], f"`{text}`: {problem[1]}", problem[2])
    return None


def _state_path_problem(loaded: Loaded, text: str, parts: tuple[Any, ...]) -> Problem | None:
    state = loaded.model.state
    if not parts:
        return ("error", "invalid-path", f"`{text}` names no state field", "write `$state.<field>`")
    field = parts[0]
    if not isinstance(field, str) or field not in state:
        return ("error", "unknown-state-field",
                f"`{text}` reads state field `{field}`, which `state:` does not declare",
                suggest(str(field), state, f"declare it under `state:`, e.g. `{field}: {{type: string}}`"))
    problem = _nested_problem(sch(state[field].json_schema()), f"$state.{field}", parts[1:], reading=True)
    if problem is not None:
        code, message, hint = problem
        return ("error", code, f"`{text}`: {message}", hint)
    return None


def _nested_problem(s: Sch | None, shown: str, parts: tuple[Any, ...], *, reading: bool) -> tuple[str, str, str] | None:
    for part in parts:
        types = types_of(s)
        container = {"object", "array"} if reading else {"object"}
        if types is not None and not types & container:
            return ("invalid-path" if reading else "unknown-state-field",
                    f"`{shown}` is {describe(types)}, so it has no field `{part}`",
                    "declare the field as an object (`type: object` with `properties`)" if not reading
                    else f"read `{shown}` itself, or change its schema")
        props = properties(s)
        if isinstance(part, str) and closed(s) and props is not None and part not in props:
            return ("unknown-state-field", f"`{shown}` has no property `{part}` (additionalProperties is false)",
                    suggest(part, props, "add it to the field's `properties`"))
        s = child(s, part)
        shown = f"{shown}.{part}"
    return None


def _check_target(loaded: Loaded, at: tuple[Any, ...], target: Any, sink: Sink) -> None:
    parsed = safe_target(target)
    if parsed is None:
        try:
            parse_save_target(target)
        except PathSyntaxError as exc:
            sink.error("invalid-path", str(exc), loaded, at, hint="write `state.<field>`")
        return
    field, rest = parsed
    state = loaded.model.state
    if field not in state:
        sink.error("unknown-state-field", f"`{target}` writes state field `{field}`, which `state:` does not "
                   "declare", loaded, at,
                   hint=suggest(field, state, f"declare it under `state:` with the type of what is saved there, "
                                               f"e.g. `{field}: {{type: string}}` (`{field}: {{}}` takes any value)"))
        return
    problem = _nested_problem(sch(state[field].json_schema()), f"state.{field}", rest, reading=False)
    if problem is not None:
        code, message, hint = problem
        sink.error(code, f"`{target}`: {message}", loaded, at, hint=hint)


def target_schema(loaded: Loaded, target: str) -> tuple[Sch | None, str | None]:
    """(schema the write must fit, reducer) for a valid target; the reducer only for whole-field writes."""
    parsed = safe_target(target)
    if parsed is None:
        return None, None
    field, rest = parsed
    declared = loaded.model.state.get(field)
    if declared is None:
        return None, None
    s: Sch | None = sch(declared.json_schema())
    for part in rest:
        s = child(s, part)
    return s, (declared.reducer if not rest else "replace")
