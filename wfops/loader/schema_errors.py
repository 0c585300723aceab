"""Turn pydantic validation errors into diagnostics a person can act on.

Each error is pointed at its node in the YAML file, named the way the user
wrote it (`step `fetch``, not `steps.0.uses`), and given a repair hint. Union
branches are never listed: a step's kind is decided before its fields are
checked, and several type errors on one value become one message.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from wfops.diagnostics import Diagnostic, error
from wfops.jsonvalues import described
from wfops.loader.yaml import Document
from wfops.model.deployment import Deployment
from wfops.model.kinds import STEP_KEYS
from wfops.model.sources import CommandSource, McpSource, OpenapiSource, PythonSource, SourcesFile
from wfops.model.workflow import STEP_KINDS, Catch, Retry, Workflow

_STEP_KINDS = STEP_KEYS
_SOURCE_KINDS = ("python", "mcp", "openapi", "command")
_KIND_HELP = ("`uses:` (call a capability), `workflow:` (run a subworkflow), `if:` (branch), "
              "`foreach:` (loop), `parallel:` (branches side by side), `interrupt:` (wait for input) or "
              "`end:` (finish)")

_EXPECTED = {
    "dict_type": "a mapping", "model_type": "a mapping", "model_attributes_type": "a mapping",
    "list_type": "a list", "tuple_type": "a list", "set_type": "a list",
    "string_type": "a string", "string_sub_type": "a string",
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "none_required": "null",
}

_MISSING_HINTS = {
    "id": "add `id: <step name>`",
    "name": "add `name: <lowercase-name>`",
    "steps": "add `steps:` with at least one step",
    "then": "add `then: <step id>`",
    "else": "add `else: <step id>`",
    "next": "add `next: <step id>`",
    "on": "add `on:` mapping each outcome to a step, e.g. `on: {approved: next-step, rejected: end}`",
    "workflow": "add `workflow: <workflow name>`",
    "kind": "add `kind: python` or `kind: mcp`",
    "module": "add `module: <dotted.module>`",
}


def schema_diagnostics(doc: Document, exc: Any) -> list[Diagnostic]:
    """One diagnostic per distinct problem in a pydantic `ValidationError`, at its node."""
    root = getattr(exc, "title", "")
    errors = list(exc.errors(include_url=False))
    found: list[Diagnostic] = []
    seen: set[tuple[Any, ...]] = set()
    for path, err in _merge_type_errors(doc.data, errors):
        if err["type"] == "union_tag_invalid" and isinstance(_node(doc.data, path), dict) \
                and "kind" in _node(doc.data, path):
            path = (*path, "kind")  # point at the bad `kind:` value, not the whole entry
        code, message, hint, at_key = _describe(root, doc.data, path, err)
        below = tuple((err.get("ctx") or {}).get("at") or ())  # a nested node the validator named
        position = doc.at((*path, *below), key=at_key)
        key = (code, position, message)
        if key not in seen:
            seen.add(key)
            found.append(error(code, message, doc.file, position, hint, **_subject(root, doc.data, path)))
    return found


def _subject(root: str, data: Any, path: tuple[Any, ...]) -> dict[str, str]:
    """What a schema error is about, read from the raw data (the model did not load): the
    workflow and step, the deployment and its workflow, or the source, where they are strings."""
    if not isinstance(data, dict):
        return {}
    found: dict[str, str] = {}
    name = data.get("name")
    if root == "Workflow":
        if isinstance(name, str):
            found["workflow"] = name
        step = _step_at(data, path[:2])
        if step is not None and isinstance(step.get("id"), str):
            found["step"] = step["id"]
    elif root == "Deployment":
        if isinstance(name, str):
            found["deployment"] = name
        workflow = data.get("workflow")
        if isinstance(workflow, str):
            found["workflow"] = workflow.split("@", 1)[0]
    elif root == "SourcesFile" and len(path) >= 2 and path[0] == "sources" and isinstance(path[1], str):
        found["source"] = path[1]
    return found


def document_path(data: Any, loc: tuple[Any, ...], *, missing: bool = False) -> tuple[Any, ...]:
    """The parts of pydantic's `loc` that are keys or indexes of the data (union labels dropped).

    For a `missing` error the last part names the absent key; it is kept so the
    message can name it, and positions fall back to the enclosing mapping.
    """
    loc = _strip_kind_tags(loc)
    last = len(loc) - 1
    path: list[Any] = []
    node = data
    for index, part in enumerate(loc):
        if part == "[key]":
            continue
        in_map = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_map or in_list:
            path.append(part)
            node = node[part]
        elif missing and index == last and isinstance(part, str):
            path.append(part)
    return tuple(path)


def _strip_kind_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the discriminator tag pydantic puts after a step index or a source id."""
    kept: list[Any] = []
    for index, part in enumerate(loc):
        # After a step's index: under `steps:`, or in a branch of a parallel step (`parallel.a[0]`).
        in_steps = index >= 2 and loc[index - 2] == "steps" or index >= 3 and loc[index - 3] == "parallel"
        if in_steps and isinstance(loc[index - 1], int) and part in _STEP_KINDS:
            continue
        if index == 2 and loc[0] == "sources" and part in _SOURCE_KINDS:
            continue
        kept.append(part)
    return tuple(kept)


def _merge_type_errors(data: Any, errors: list[dict[str, Any]]) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Pair errors with paths; type errors of several union branches on one value become one."""
    out: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    by_path: dict[tuple[Any, ...], dict[str, Any]] = {}
    for err in errors:
        path = document_path(data, err["loc"], missing=err["type"] == "missing")
        expected = _EXPECTED.get(err["type"])
        if expected is not None and "save-path" in err["loc"]:
            expected = "a `state.<field>` path or a mapping of output fields to paths"
        if expected is None:
            out.append((path, err))
            continue
        merged = by_path.get(path)
        if merged is None:
            merged = {**err, "type": "wfops-type", "expected": [expected]}
            by_path[path] = merged
            out.append((path, merged))
        elif expected not in merged["expected"]:
            merged["expected"].append(expected)
    return out


def _describe(root: str, data: Any, path: tuple[Any, ...], err: dict[str, Any]) -> tuple[str, str, str, bool]:
    """(code, message, hint, point at the key rather than the value)."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    last = path[-1] if path else ""
    if kind == "union_tag_invalid" and last == "kind":
        path = path[:-1]
    where = describe_path(data, path)
    if kind == "wfops":
        message = ctx["message"]
        if path and re.search(rf"`{re.escape(str(last))}\b", message):  # it names its field: name the owner
            where = describe_path(data, path[:-1])
        return ctx["code"], f"{where}: {message}" if path else message, ctx["hint"], False
    if kind == "missing":
        owner = describe_path(data, path[:-1])
        return "missing-key", f"`{last}` is required in {owner}", _MISSING_HINTS.get(str(last), f"add `{last}:`"), False
    if kind == "extra_forbidden":
        return _unknown_key(root, data, path)
    if kind == "step-kind":
        return _no_step_kind(data, path)
    if kind == "wfops-type":
        kinds = err["expected"]
        if "a number" in kinds:  # a number covers an integer: `int | float` reads as one kind
            kinds = [k for k in kinds if k != "an integer"]
        expected = " or ".join(kinds)
        return ("wrong-type", f"{where} must be {expected}, got {described(err['input'])}",
                f"write {expected} here", False)
    if "[key]" in err["loc"] and kind == "string_pattern_mismatch" and \
            ctx.get("pattern") == r"^[A-Za-z_][A-Za-z0-9_]*$":  # an `env:` key (model/sources.py)
        return ("invalid-value", f"{where}: {_short(err['input'])} is not a valid environment variable name",
                "use letters, digits and `_`, not starting with a digit", True)
    if "[key]" in err["loc"] and kind == "string_pattern_mismatch":
        return ("invalid-value", f"{_short(last)} is not a valid source id",
                "use letters, digits, `_` and `-` only", True)
    if kind == "string_pattern_mismatch":
        role = _role(path)
        if role == "workflow" and path[:1] == ("steps",):
            role = "child"  # a step names a workflow of the project; only a deployment pins one
        return ("invalid-value", f"{where}: {_short(err['input'])} is not a valid {_ROLE_NAMES.get(role, 'value')}",
                _pattern_hint(role, ctx.get("pattern", "")), False)
    if kind in ("literal_error", "enum"):
        expected = _quoted_as_json(str(ctx.get("expected", "")))
        return "invalid-value", f"{where}: {_short(err['input'])} is not allowed; expected {expected}", \
            f"use one of {expected}", False
    if kind == "union_tag_invalid":
        return ("invalid-value", f"{where}: unknown kind {_short(ctx.get('tag', ''))}; expected "
                f"{_quoted_as_json(str(ctx.get('expected_tags', '')))}", "use `kind: python` or `kind: mcp`", False)
    if kind == "union_tag_not_found":
        return "missing-key", f"`kind` is required in {where}", _MISSING_HINTS["kind"], False
    bound = _BOUNDS.get(kind)
    if bound is not None:
        symbol, name = bound
        limit = ctx.get(name)
        return ("invalid-value", f"{where} must be {symbol} {limit}, got {_short(err['input'])}",
                f"use a value {symbol} {limit}", False)
    if kind in ("too_short", "too_long"):
        size = ctx.get("min_length" if kind == "too_short" else "max_length")
        word = "at least" if kind == "too_short" else "at most"
        noun = "item" if size == 1 else "items"
        return ("invalid-value", f"{where} needs {word} {size} {noun}, got {ctx.get('actual_length')}",
                f"give {word} {size} {noun}", False)
    message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return "invalid-value", f"{where}: {message}", "fix the value; `wfops schema` shows the format", False


_BOUNDS = {"greater_than": (">", "gt"), "greater_than_equal": (">=", "ge"),
           "less_than": ("<", "lt"), "less_than_equal": ("<=", "le")}


def _unknown_key(root: str, data: Any, path: tuple[Any, ...]) -> tuple[str, str, str, bool]:
    key = str(path[-1]) if path else ""
    owner = describe_path(data, path[:-1])
    step = _step_at(data, path[:-1]) if root == "Workflow" else None
    if step is not None and key in _STEP_KINDS:
        others = [k for k in _STEP_KINDS if k in step and k != key]
        if others:
            return ("ambiguous-step-kind", f"{owner} mixes two kinds: `{others[0]}` and `{key}`",
                    "keep one kind key per step; split it into two steps joined by `next:`", True)
    allowed = allowed_keys(root, data, path[:-1])
    hint = "remove it or fix its spelling"
    if allowed:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = (f"did you mean `{close[0]}`? " if close else "remove it or fix its spelling; ") + \
            "allowed here: " + ", ".join(allowed)
    return "unknown-key", f"unknown key `{key}` in {owner}", hint, True


def _no_step_kind(data: Any, path: tuple[Any, ...]) -> tuple[str, str, str, bool]:
    where = describe_path(data, path)
    node = _node(data, path)
    if not isinstance(node, dict):
        return ("wrong-type", f"{where} must be a mapping with `id` and a kind key, got {described(node)}",
                "write a step as `- id: <name>` followed by its keys, e.g. `uses: std.echo`", False)
    close = [m for k in node if isinstance(k, str) for m in difflib.get_close_matches(k, _STEP_KINDS, 1, 0.6)]
    hint = (f"did you mean `{close[0]}`? " if close else "") + "add one of " + _KIND_HELP
    return "unknown-step-kind", f"{where} has no kind", hint, False


def allowed_keys(root: str, data: Any, container: tuple[Any, ...]) -> list[str]:
    """The keys the schema allows in the mapping at `container`, when known."""
    model = _model_at(root, data, container)
    if model is None:
        return []
    return [field.alias or name for name, field in model.model_fields.items()]


def _model_at(root: str, data: Any, container: tuple[Any, ...]) -> Any:
    if root == "Workflow":
        if container == ():
            return Workflow
        step = _step_at(data, container[:2])
        if step is None:
            return None
        if len(container) == 2:
            kind = next((k for k in STEP_KINDS if k in step), None)
            return STEP_KINDS.get(kind) if kind else None
        if len(container) == 3 and container[2] in ("retry", "catch"):
            return Retry if container[2] == "retry" else Catch
        if len(container) == 4 and container[2] == "catch" and isinstance(container[3], int):
            return Catch
        return None
    if root == "Deployment" and container == ():
        return Deployment
    if root == "SourcesFile":
        if container == ():
            return SourcesFile
        if len(container) == 2 and container[0] == "sources":
            node = _node(data, container)
            kind = node.get("kind") if isinstance(node, dict) else None
            return ({"python": PythonSource, "mcp": McpSource, "openapi": OpenapiSource,
                     "command": CommandSource}.get(kind) if isinstance(kind, str) else None)
    return None


def describe_path(data: Any, path: tuple[Any, ...]) -> str:
    """`step `fetch``, `` `retry.attempts` of step `fetch` ``, `source `clock``, `` `drift` ``."""
    if not path:
        return "the file"
    owner = None
    rest = path
    if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int):
        step = _node(data, path[:2])
        step_id = step.get("id") if isinstance(step, dict) else None
        owner = f"step `{step_id}`" if isinstance(step_id, str) else f"step {path[1] + 1}"
        rest = path[2:]
    elif len(path) >= 2 and path[0] == "sources" and isinstance(path[1], str):
        owner = f"source `{path[1]}`"
        rest = path[2:]
    if not rest:
        return owner or "the file"
    field = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(rest))
    return f"`{field}` of {owner}" if owner else f"`{field}`"


_ROLE_NAMES = {
    "name": "name", "id": "step id", "uses": "capability reference (`<source>.<capability>`)",
    "workflow": "workflow reference", "child": "workflow name", "end": "outcome name", "save": "save target", "errors": "save target",
    "route": "step id", "module": "module name", "url": "URL", "foreach": "path", "interrupt": "interrupt kind",
    "cron": "cron expression", "window": "duration",
}


def _role(path: tuple[Any, ...]) -> str:
    """What a string value is for, judged from where it stands."""
    if len(path) >= 2 and path[-2] == "save" or path[-1:] == ("save",):
        return "save"
    if len(path) >= 2 and path[-2] == "on" or path[-1:] in (("next",), ("then",), ("else",), ("start",)):
        return "route"
    return str(path[-1]) if path else ""


def _pattern_hint(role: str, pattern: str) -> str:
    hints = {
        "name": "use lowercase letters, digits, `_`, `.` and `-`, starting with a letter or digit",
        "id": "use letters, digits, `_` and `-`, starting with a letter or `_`",
        "route": "name a step id of this workflow, or `end`",
        "uses": "write `<source>.<capability>`, e.g. `std.echo`",
        "workflow": "write a workflow name, or `name@sha256:<hex prefix>` to pin",
        "child": "write the `name:` of a workflow of this project (pinning with `@sha256:` is for "
                 "deployments: a step runs the child's current version, which `wfops.lock` records)",
        "foreach": "iterate a path such as `$state.items`",
        "save": "write `state.<field>` or `state.<field>.<key>`",
        "errors": "write `state.<field>`",
        "end": "use letters, digits, `_` and `-`, e.g. `end: rejected`",
        "module": "write a dotted module path such as `examples.report.ops`",
        "url": "write an http:// or https:// URL",
        "cron": "write five fields (minute hour day-of-month month day-of-week), e.g. `*/5 * * * *`, "
                "or @hourly, @daily, @weekly, @monthly, @yearly",
        "window": "write a whole number and a unit: `90s`, `15m`, `6h`, `2d`",
    }
    return hints.get(role, f"write a value matching {pattern}")


def _step_at(data: Any, path: tuple[Any, ...]) -> dict[str, Any] | None:
    if len(path) != 2 or path[0] != "steps" or not isinstance(path[1], int):
        return None
    node = _node(data, path)
    return node if isinstance(node, dict) else None


def _node(data: Any, path: tuple[Any, ...]) -> Any:
    node = data
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _short(value: Any, limit: int = 40) -> str:
    """A value as JSON (as the user wrote it: `"9a"`, `null`, not Python's `'9a'`, `None`), cut."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def _quoted_as_json(listing: str) -> str:
    """pydantic lists allowed literals as Python reprs (`'fail' or 'warn'`): quote them as JSON."""
    return re.sub(r"'([^'\\\"]*)'", r'"\1"', listing)
