"""The platform source `std`: always present, needs no declaration or binding."""

from __future__ import annotations

import string
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wfops.errors import CapabilityError
from wfops.sources.base import CallResult, Capability, StepContext

Handler = Callable[[dict[str, Any], StepContext], Awaitable[dict[str, Any]]]


async def _echo(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    return {"value": payload.get("value")}


async def _fail(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    raise CapabilityError(str(payload.get("message", "std.fail was called")))


async def _sleep(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    import asyncio  # here, not at the top: validation never runs a capability

    await asyncio.sleep(float(payload["seconds"]))
    return {}


async def _format(payload: dict[str, Any], _: StepContext) -> dict[str, Any]:
    template, values = payload["template"], payload.get("values") or {}
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
        missing = [name for name in fields if name.split(".")[0].split("[")[0] not in values]
        if missing:
            raise CapabilityError(f"template placeholder {{{missing[0]}}} has no value in `values`")
        return {"text": template.format_map(values)}
    except (ValueError, IndexError, KeyError, AttributeError) as exc:
        raise CapabilityError(f"bad template: {exc}") from None


_CAPABILITIES: dict[str, tuple[Capability, Handler]] = {
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
        description="Fill a template's named `{field}` placeholders from `values` (str.format rules)."), _format),
}


class StdSource:
    id = "std"

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return {name: cap for name, (cap, _) in _CAPABILITIES.items()}

    def handler(self, name: str) -> Handler:
        return _CAPABILITIES[name][1]

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        entry = _CAPABILITIES.get(name)
        if entry is None:
            raise CapabilityError(f"std has no capability {name!r}")
        return CallResult("ok", await entry[1](payload, context))

    async def close(self) -> None:
        return None

