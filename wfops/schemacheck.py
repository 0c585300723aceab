"""JSON Schema validation with compiled validators cached per schema object.

jsonschema is imported on first use only (start-up cost), and each schema is
compiled once per process: validating a small object is then a few microseconds.
"""

from __future__ import annotations

import copy
import json
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
    return f"${where}: {json_message(err)}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def json_message(err: Any) -> str:
    """A jsonschema error's message with values written as JSON, as the user wrote them:
    `null is not of type "object"`, not Python's `None is not of type 'object'`."""
    kind, expected, value = err.validator, err.validator_value, err.instance
    if kind == "type":
        types = expected if isinstance(expected, list) else [expected]
        return f"{_json(value)} is not of type {' or '.join(_json(t) for t in types)}"
    if kind == "required" and isinstance(expected, list) and isinstance(value, dict):
        missing = [name for name in expected if name not in value]
        if missing:
            return f"{_json(missing[0])} is a required property"
    if kind == "additionalProperties" and isinstance(value, dict):
        listed = set((err.schema or {}).get("properties") or {})
        extra = [name for name in value if name not in listed]
        if extra:
            verb = "was" if len(extra) == 1 else "were"
            return f"additional properties are not allowed ({', '.join(_json(e) for e in extra)} {verb} unexpected)"
    if kind == "enum":
        return f"{_json(value)} is not one of {_json(expected)}"
    if kind == "const":
        return f"{_json(expected)} was expected"
    message = str(err.message)
    for shown in (value, expected):  # other validators quote the value or the keyword's operand
        text = repr(shown)
        if text in message and text != _json(shown):
            message = message.replace(text, _json(shown))
    return message


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
