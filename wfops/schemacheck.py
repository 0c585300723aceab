"""JSON Schema validation with compiled validators cached per schema object.

jsonschema is imported on first use only (start-up cost), and each schema is
compiled once per process: validating a small object is then a few microseconds.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, Protocol


class _Validator(Protocol):
    """The part of a jsonschema validator used here (jsonschema itself ships no types)."""

    def is_valid(self, instance: Any) -> bool: ...

    def iter_errors(self, instance: Any) -> Iterator[Any]: ...


_CACHE: dict[int, tuple[dict[str, Any], _Validator]] = {}
_MAX_CACHED = 1024


def _validator(schema: dict[str, Any]) -> _Validator:
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    # deferred: jsonschema (~60 ms), only when a run or a call checks a value
    from jsonschema import Draft202012Validator

    validator: _Validator = Draft202012Validator(schema)
    if len(_CACHE) >= _MAX_CACHED:  # long-lived processes (watch, mcp) compile new models
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, validator)  # keep the schema alive so its id stays unique
    return validator


def first_error(schema: dict[str, Any] | None, value: Any) -> str | None:
    """None when `value` matches `schema`; else `where: reason` of the most relevant error."""
    if not schema:
        return None
    try:
        validator = _validator(schema)
        if validator.is_valid(value):
            return None
        # deferred: jsonschema (~60 ms), see _validator
        from jsonschema.exceptions import best_match

        err = best_match(validator.iter_errors(value))
    except Exception as exc:  # an invalid schema is reported, never a traceback
        return f"schema cannot be used: {exc}"
    if err is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    return f"${where}: {err.message}"


def with_defaults(schema: Any, value: Any) -> Any:
    """`value` with the `default` of every absent property filled in, at any object depth.

    JSON Schema validators never apply `default`; workflow inputs do (as GitHub Actions and
    Argo parameters do), so a run sees the documented default instead of null. Only plain
    `properties` are followed ($ref, allOf and friends are not).
    """
    if not isinstance(schema, dict) or not isinstance(value, dict):
        return value
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return value
    filled = dict(value)
    for key, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        if key not in filled and "default" in sub:
            filled[key] = copy.deepcopy(sub["default"])
        if key in filled:
            filled[key] = with_defaults(sub, filled[key])
    return filled
