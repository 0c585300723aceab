"""Conditions whose operands can never compare as written.

At run time `gt ge lt le` hold only between two numbers or two strings, `in` only
looks inside a list, and `eq` is JSON equality (`"1"` is not `1`); any other pair
quietly gives false (true for `ne`). A branch that can never be taken is a bug, so
where the declared types cannot overlap (gradually: unknown types pass) it is a
`type-mismatch`, like a binding that cannot fit. `null` is never a mismatch: an
unset value reads as null, and `{eq: [$state.x, null]}` is how one tests for it.
"""

from __future__ import annotations

import json
from typing import Any

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.jsontypes import NUMERIC, describe, overlaps, types_of
from wfops.compiler.checks.scope import Scope, safe_parse, schema_of
from wfops.jsonvalues import json_type
from wfops.loader.project import Loaded
from wfops.model.paths import is_path

_ORDERED = ("gt", "ge", "lt", "le")
_STRING = frozenset({"string"})
_ARRAY = frozenset({"array"})


def check_conditions(loaded: Loaded, sink: Sink) -> None:
    for index, step in enumerate(loaded.model.steps):
        condition = getattr(step, "if_", None)
        if isinstance(condition, dict):
            _walk(loaded, condition, ("steps", index, "if"), sink)
        for name, branch_condition in (getattr(step, "when", None) or {}).items():
            _walk(loaded, branch_condition, ("steps", index, "when", name), sink)


def _walk(loaded: Loaded, condition: Any, at: tuple[Any, ...], sink: Sink) -> None:
    if not isinstance(condition, dict) or len(condition) != 1:
        return  # malformed conditions are the schema's to report
    (op, operand), = condition.items()
    if op in ("and", "or") and isinstance(operand, list):
        for index, inner in enumerate(operand):
            _walk(loaded, inner, (*at, op, index), sink)
    elif op == "not":
        _walk(loaded, operand, (*at, op), sink)
    elif op in (*_ORDERED, "eq", "ne", "in") and isinstance(operand, list) and len(operand) == 2:
        left, right = (_types(loaded, value) for value in operand)
        problem = _problem(op, left, right)
        if problem is not None:
            shown = ", ".join(_show(value) for value in operand)
            sink.error("type-mismatch", f"`{op}: [{shown}]` {problem}", loaded, (*at, op),
                       hint="compare values of the same type (a quoted \"5\" is a string), or fix the path")


def _problem(op: str, left: frozenset[str] | None, right: frozenset[str] | None) -> str | None:
    if left is None or right is None or "null" in left or "null" in right:
        return None
    if op in _ORDERED:
        numbers = overlaps(left, NUMERIC) and overlaps(right, NUMERIC)
        strings = overlaps(left, _STRING) and overlaps(right, _STRING)
        if not (numbers or strings):
            return (f"compares {describe(left)} with {describe(right)}, so it is always false "
                    f"(`{op}` compares two numbers or two strings)")
    elif op == "in":
        if not overlaps(right, _ARRAY):
            return f"looks inside {describe(right)}, not a list, so it is always false"
    elif not (overlaps(left, right) or overlaps(right, left)):
        verdict = "false" if op == "eq" else "true"
        return f"compares {describe(left)} with {describe(right)}, which are never equal, so it is always {verdict}"
    return None


def _types(loaded: Loaded, value: Any) -> frozenset[str] | None:
    if not is_path(value):
        return frozenset({json_type(value)})
    path = safe_parse(value)
    if path is None or path.root in ("item", "index"):
        return None  # reported as a path problem elsewhere
    return types_of(schema_of(path, Scope(loaded, "if")))


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value if is_path(value) else f'"{value}"'

    return json.dumps(value, ensure_ascii=False)
