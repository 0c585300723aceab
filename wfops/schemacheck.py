"""JSON Schema validation with compiled validators cached per schema object.

jsonschema is imported on first use only (start-up cost), and each schema is
compiled once per process: validating a small object is then a few microseconds.
Most schemas a run checks (workflow inputs, std contracts, plain models) use only
`type`, `properties`, `required`, `items` and `additionalProperties`: a value that
such a schema accepts is accepted here without importing jsonschema (~60 ms of a
short run). Anything else, and every value that may be invalid, goes to jsonschema,
so its verdict and its messages are the ones users see.
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
    if not schema or _plainly_valid(schema, value):
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


# Keywords that assert nothing under Draft 2020-12 without a format checker.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "format", "deprecated",
                          "readOnly", "writeOnly"})
_PLAIN = _ANNOTATIONS | {"type", "properties", "required", "items", "additionalProperties"}


def _plainly_valid(schema: Any, value: Any) -> bool:
    """True only when `value` surely matches `schema` (as jsonschema's Draft 2020-12 judges);
    False when it may not, or when the schema uses a keyword not handled here."""
    if schema is True:
        return True
    if not isinstance(schema, dict) or not schema.keys() <= _PLAIN:
        return False
    kind = schema.get("type")
    if kind is not None and not any(_is_type(value, k) for k in (kind if isinstance(kind, list) else [kind])):
        return False
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        if not isinstance(properties, dict) or not isinstance(required, list) or extra is not True \
                and extra is not False and not isinstance(extra, dict):
            return False
        if any(key not in value for key in required):
            return False
        for key, item in value.items():
            sub = properties.get(key, extra) if isinstance(key, str) else extra
            if sub is not True and not _plainly_valid(sub, item):
                return False
    elif isinstance(value, list) and "items" in schema:
        items = schema["items"]
        return all(_plainly_valid(items, item) for item in value)
    return True


def _is_type(value: Any, kind: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, int | float)
    return False


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
