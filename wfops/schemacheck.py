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
import json
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol


class _Validator(Protocol):
    """The part of a jsonschema validator used here (jsonschema itself ships no types)."""

    def is_valid(self, instance: Any) -> bool: ...

    def iter_errors(self, instance: Any) -> Iterator[Any]: ...


_CACHE: dict[int, tuple[dict[str, Any], _Validator]] = {}
_MAX_CACHED = 1024

#: The CPU time that the regex matches (`pattern`, `patternProperties`) of one check of one
#: value may take together, in seconds. A user's pattern may backtrack exponentially
#: (`^(a|a)*$` on "aaaa…!"); the value is then refused with a clear error instead of
#: holding a run, a call or the MCP server for ever. CPU time, not wall time: the `regex`
#: module's own limit counts the process's CPU time (C `clock()`), so on a busy machine
#: the wall time is longer. One total per check, not per match: a value with many strings,
#: or a schema with many patterns, would otherwise multiply it.
PATTERN_SECONDS = 1.0

# What is left of PATTERN_SECONDS in the check under way (`first_error`); None outside one.
# A ContextVar: parallel steps check values in threads at once, each with its own budget.
_PATTERN_BUDGET: ContextVar[list[float] | None] = ContextVar("pattern_budget", default=None)


class PatternTimeout(Exception):
    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        super().__init__(f"the pattern {shown!r} took longer than {PATTERN_SECONDS:g} s to match the value; "
                         "use a pattern that does not backtrack (no nested repeats such as (a+)+)")


def _search(pattern: str, text: str) -> bool:
    # deferred: regex (~9 ms), only when a schema with a pattern checks a value
    import regex

    budget = _PATTERN_BUDGET.get()
    left = PATTERN_SECONDS if budget is None else budget[0]
    if left <= 0:
        raise PatternTimeout(pattern)
    started = time.process_time()  # the clock regex's timeout counts
    try:
        return regex.search(pattern, text, timeout=left) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None
    finally:
        if budget is not None:
            budget[0] -= time.process_time() - started


def _bounded_validator_class() -> Any:
    """Draft 2020-12 with every regex keyword matched by `_search` (jsonschema's own call
    `re.search`, which no time limit can stop)."""
    # deferred: jsonschema (~60 ms), only when a run or a call checks a value
    from jsonschema import Draft202012Validator, ValidationError, validators

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if _search(patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    builtin = Draft202012Validator.VALIDATORS["additionalProperties"]

    def additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
        patterns = schema.get("patternProperties") if isinstance(schema, dict) else None
        if not patterns or not validator.is_type(instance, "object"):
            yield from builtin(validator, ap, instance, schema)
            return
        # The builtin matches keys with re.search: decide which keys the patterns cover here,
        # then let it judge the rest as if the patterns were absent.
        properties = schema.get("properties", {})
        covered = {k for k in instance if k not in properties and any(_search(p, k) for p in patterns)}
        rest = {k: v for k, v in instance.items() if k not in covered}
        plain = {k: v for k, v in schema.items() if k != "patternProperties"}
        yield from builtin(validator, ap, rest, plain)

    return validators.extend(Draft202012Validator, {"pattern": pattern, "patternProperties": pattern_properties,
                                                    "additionalProperties": additional_properties})


_VALIDATOR_CLASS: Any = None


def _validator(schema: dict[str, Any]) -> _Validator:
    global _VALIDATOR_CLASS
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if _VALIDATOR_CLASS is None:
        _VALIDATOR_CLASS = _bounded_validator_class()
    validator: _Validator = _VALIDATOR_CLASS(schema)
    if len(_CACHE) >= _MAX_CACHED:  # long-lived processes (watch, mcp) compile new models
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, validator)  # keep the schema alive so its id stays unique
    return validator


def first_error(schema: dict[str, Any] | None, value: Any) -> str | None:
    """None when `value` matches `schema`; else `where: reason` of the most relevant error."""
    if not schema or _plain_check(schema)(value):
        return None
    budget = _PATTERN_BUDGET.set([PATTERN_SECONDS])  # is_valid and iter_errors share it
    try:
        validator = _validator(schema)
        if validator.is_valid(value):
            return None
        # deferred: jsonschema (~60 ms), see _validator
        from jsonschema.exceptions import best_match

        err = best_match(validator.iter_errors(value))
    except PatternTimeout as exc:
        return f"$: {exc}"
    except Exception as exc:  # an invalid schema is reported, never a traceback
        return f"schema cannot be used: {exc}"
    finally:
        _PATTERN_BUDGET.reset(budget)
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


# Keywords that assert nothing under Draft 2020-12 without a format checker.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "format", "deprecated",
                          "readOnly", "writeOnly"})
_STRUCTURE = frozenset({"properties", "required", "items", "additionalProperties"})
_PLAIN = _ANNOTATIONS | _STRUCTURE | {"type"}


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


PlainCheck = Callable[[Any], bool]
_PLAIN_CHECKS: dict[int, tuple[Any, PlainCheck]] = {}
_COMPILE_DEPTH = 32  # deeper parts of a schema are judged by `_plainly_valid` as they are met


def _plain_check(schema: dict[str, Any]) -> PlainCheck:
    """`_plainly_valid` for one schema, its decisions about the schema taken once (a
    capability's output schema is asked about on every call of a fan-out's items)."""
    hit = _PLAIN_CHECKS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    check = _compile_plain(schema, 0)
    if len(_PLAIN_CHECKS) >= _MAX_CACHED:
        _PLAIN_CHECKS.clear()
    _PLAIN_CHECKS[id(schema)] = (schema, check)  # kept alive, so its id stays unique
    return check


def _yes(value: Any) -> bool:
    return True


def _no(value: Any) -> bool:
    return False


def _compile_plain(schema: Any, depth: int) -> PlainCheck:
    """A function deciding what `_plainly_valid(schema, value)` decides, keyword for keyword."""
    if schema is True:
        return _yes
    if not isinstance(schema, dict) or not schema.keys() <= _PLAIN:
        return _no
    if depth >= _COMPILE_DEPTH:
        return lambda value: _plainly_valid(schema, value)
    kind = schema.get("type")
    kinds = None if kind is None else tuple(kind if isinstance(kind, list) else [kind])
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    no_object = not isinstance(properties, dict) or not isinstance(required, list) or extra is not True \
        and extra is not False and not isinstance(extra, dict)
    named = {} if no_object else {key: _compile_plain(sub, depth + 1) for key, sub in properties.items()}
    other = _compile_plain(extra, depth + 1)
    items = _compile_plain(schema["items"], depth + 1) if "items" in schema else None

    typed = _type_test(kinds) if kinds is not None else None
    if not schema.keys() & _STRUCTURE:  # a leaf (`{"type": "integer", "title": ...}`): its type says all
        return typed or _yes

    def check(value: Any) -> bool:
        if typed is not None and not typed(value):
            return False
        if isinstance(value, dict):
            if no_object:
                return False
            for key in required:
                if key not in value:
                    return False
            for key, item in value.items():
                if not (named.get(key, other) if isinstance(key, str) else other)(item):
                    return False
        elif items is not None and isinstance(value, list):
            return all(map(items, value))
        return True

    return check


#: `_is_type(value, kind)` for one kind, as one test decided when a schema is compiled.
_TYPE_TESTS: dict[str, PlainCheck] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "integer": lambda value: type(value) is int or _is_type(value, "integer"),
    "number": lambda value: type(value) is int or type(value) is float or _is_type(value, "number"),
}


def _type_test(kinds: tuple[Any, ...]) -> PlainCheck:
    if len(kinds) == 1 and isinstance(kinds[0], str) and kinds[0] in _TYPE_TESTS:
        return _TYPE_TESTS[kinds[0]]
    return lambda value: any(_is_type(value, k) for k in kinds)


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
