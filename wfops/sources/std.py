"""The platform source `std`: always present, needs no declaration or binding."""

from __future__ import annotations

import json
import math
import re
import string
from _string import formatter_field_name_split  # type: ignore[import-not-found]  # the parser str.format itself uses; typeshed has no stub
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wfops.errors import CapabilityError
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext, ok_result

# A capability that never waits is a plain function (no coroutine of its own per call).
Handler = Callable[[dict[str, Any], StepContext], dict[str, Any]]
Waiting = Callable[[dict[str, Any], StepContext], Awaitable[dict[str, Any]]]


def _echo(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    return {"value": payload.get("value")}


def _fail(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    raise CapabilityError(str(payload.get("message", "std.fail was called")))


async def _sleep(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    import asyncio  # deferred: asyncio (~33 ms), validation never runs a capability

    seconds = payload.get("seconds")
    # Checked here because std outputs and inputs skip the schema check: a string, a negative
    # or an infinite value (YAML `.inf`) must fail the step, not hang it or raise a TypeError.
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < math.inf:
        raise CapabilityError(f"seconds must be a finite number >= 0, got {json.dumps(seconds, default=str)}")
    await asyncio.sleep(seconds)
    return {}


# A format spec may pad or round, but a width or precision this large only makes
# memory: `{x:999999999}` would build a gigabyte string.
_MAX_SPEC_NUMBER = 1000


class _JsonFormatter(string.Formatter):
    """`str.format` over JSON values, without Python's object model.

    `{a.b}` and `{a[b]}` look up keys of objects (and indexes of lists), never
    attributes, so `{x.__class__}` cannot reach Python internals. Values that are
    not strings or numbers (true, null, objects, lists) are written as JSON.
    """

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        if not field_name or field_name.isdigit():  # `{}` arrives here numbered
            raise CapabilityError("a template placeholder is positional (`{}` or `{0}`); name it, "
                                  "e.g. `{name}`, and give `name` in `values`")
        first, rest = _formatter_field_name_split(field_name)
        if first not in kwargs:
            raise CapabilityError(f"template placeholder {{{field_name}}} has no value in `values`")
        value = kwargs[first]
        for _, key in rest:
            value = _lookup(value, key, field_name)
        return value, str(first)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a"):  # the representation of a JSON value is its JSON text
            return json.dumps(value, ensure_ascii=conversion == "a")
        if conversion is None and (isinstance(value, str) or _is_number(value)):
            return value  # kept as is, so numeric specs such as `{x:.2f}` apply
        if conversion in (None, "s"):
            return _text(value)
        raise CapabilityError(f"unknown conversion `!{conversion}` (use `!s` or `!r`)")

    def format_field(self, value: Any, format_spec: str) -> str:
        if any(int(n) > _MAX_SPEC_NUMBER for n in re.findall(r"\d+", format_spec)):
            raise CapabilityError(f"format spec {format_spec!r}: widths and precisions above "
                                  f"{_MAX_SPEC_NUMBER} are not allowed")
        return format(value, format_spec)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(value: Any) -> str:
    """Strings and numbers as they are; true, null, objects and lists as JSON."""
    if isinstance(value, str):
        return value
    if _is_number(value):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _formatter_field_name_split(field_name: str) -> tuple[Any, Any]:
    first, rest = formatter_field_name_split(field_name)
    return first, rest


def _lookup(value: Any, key: Any, field_name: str) -> Any:
    if isinstance(value, dict) and str(key) in value:
        return value[str(key)]
    if isinstance(value, list) and not isinstance(value, str):
        try:
            return value[int(key)]
        except (ValueError, IndexError):
            pass
    raise CapabilityError(f"template placeholder {{{field_name}}}: no `{key}` in the value given")


def _format(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    template, values = payload.get("template"), payload.get("values")
    # std inputs may reach here unchecked: a string `values` would be searched as text.
    if not isinstance(template, str):
        raise CapabilityError(f"`template` must be a string, got {json.dumps(template, default=str)}")
    if not isinstance(values, dict):
        raise CapabilityError(f"`values` must be an object, got {json.dumps(values, default=str)}")
    try:
        return {"text": _JsonFormatter().vformat(template, (), values)}
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise CapabilityError(f"bad template: {exc}") from None


_CAPABILITIES: dict[str, tuple[Capability, Handler | Waiting]] = {
    "echo": (Capability(
        "std", "echo",
        {"type": "object", "properties": {"value": {"description": "Any JSON value."}}, "required": ["value"],
         "additionalProperties": False},
        {"type": "object", "properties": {"value": {}}, "required": ["value"]},
        description="Return `value` unchanged. Useful to copy or reshape data, and for tests."), _echo),
    "fail": (Capability(
        "std", "fail",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"],
         "additionalProperties": False},
        {"type": "object", "properties": {}},
        description="Always fail with `message`. Useful to exercise `catch` and retries."), _fail),
    "sleep": (Capability(
        "std", "sleep",
        {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}}, "required": ["seconds"],
         "additionalProperties": False},
        {"type": "object", "properties": {}},
        description="Wait `seconds` (cancellable by the step's timeout)."), _sleep),
    "format": (Capability(
        "std", "format",
        {"type": "object",
         "properties": {"template": {"type": "string", "description": "Text with named {field} placeholders."},
                        "values": {"type": "object", "description": "Values for the placeholders."}},
         "required": ["template", "values"], "additionalProperties": False},
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        description="Fill a template's named `{field}` placeholders from `values`. `{a.b}` or `{a[b]}` reads a key of "
                    "an object value, `{a[0]}` an item of a list; `{{` and `}}` are literal braces; a format spec pads or "
                    "rounds (`{n:>5}`, `{x:.2f}`). Strings and numbers are written as they are, anything else "
                    "(true, null, objects, lists) as JSON."), _format),
}

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE


def _waits(handler: Callable[..., Any]) -> bool:
    """Whether `handler` is an `async def`: `inspect.iscoroutinefunction` for std's own plain
    functions, read from the code flags, since `inspect` (with `ast`, `dis`, `tokenize`) is not
    otherwise on a cold validate's path."""
    return bool(handler.__code__.co_flags & _CO_COROUTINE)


# Built once: a step's call looks its capability up here (std's table never changes).
_CAPS: dict[str, Capability] = {name: cap for name, (cap, _) in _CAPABILITIES.items()}
_PLAIN: dict[str, Handler] = {name: handler for name, (_, handler) in _CAPABILITIES.items()  # type: ignore[misc]
                              if not _waits(handler)}
_WAITING: dict[str, Waiting] = {name: handler for name, (_, handler) in _CAPABILITIES.items()  # type: ignore[misc]
                                if _waits(handler)}


class StdSource:
    id = "std"
    kind: SourceKind = "std"

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return _CAPS

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        plain = _PLAIN.get(name)
        if plain is not None:
            return ok_result(plain(payload, context))
        waiting = _WAITING.get(name)
        if waiting is None:
            raise CapabilityError(f"std has no capability {name!r}")
        return ok_result(await waiting(payload, context))

    async def close(self) -> None:
        return None
