"""The source plugin protocol: what the engine, compiler and catalog see of any source."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from wfops.canonical import sha256_of
from wfops.errors import WfopsError
from wfops.records import Record, init

SourceKind = Literal["std", "python", "mcp", "openapi", "command"]


class CapabilityRef(Record):
    """`<source>.<capability>`: the one parser of a capability ref (logical in a workflow's
    `uses:`, concrete in `wfops caps`). The capability name may itself contain dots."""

    __slots__ = ("source", "name")

    source: str
    name: str

    def __init__(self, source: str, name: str) -> None:
        init(self, "source", source)
        init(self, "name", name)

    @classmethod
    def parse(cls, text: str) -> CapabilityRef:
        source, dot, name = text.partition(".")
        if not dot or not source or not name:
            raise WfopsError(f"{text!r} is not a capability ref",
                             hint="write `<source>.<capability>`, e.g. std.echo")
        return cls(source, name)

    def __str__(self) -> str:
        return f"{self.source}.{self.name}"


# What `annotations`, `code` and `cache` hold is not part of the contract: two capabilities that
# differ only there are equal.
class Capability(Record, uncompared=("annotations", "code", "cache")):
    """One callable thing a source offers, with its contract."""

    __slots__ = ("source", "name", "input_schema", "output_schema", "outcomes", "description", "annotations",
                 "code", "cache", "defaults", "pins")

    source: str
    name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    outcomes: tuple[str, ...]
    description: str
    # Hints a source declares about the capability (an MCP tool's readOnlyHint, destructiveHint, ...).
    # Not part of the contract: they never change its hash or count as drift.
    annotations: Mapping[str, Any]
    # Part of a step cache key, not of the contract: the hash of the code behind the capability
    # where its source can give one (a python node: its module and the project modules it uses).
    code: str | None
    # The capability's step cache default (`@wfops.node(cache=...)`, a tool's in sources.yaml):
    # True (no expiry), seconds (a ttl), or None (steps cache only when they say so).
    cache: bool | float | None
    # What a step calling it gets when it gives no `retry`/`timeout` of its own:
    # `{"retry": {attempts, backoff, ...}, "timeout": seconds}` (either may be absent). Part of
    # the contract (and its hash) when there are any, so a capability without them keeps its hash.
    defaults: Mapping[str, Any]
    # What else the contract stands on, by name: a command's executable and the sha256 of a
    # script of the repository it runs, an OpenAPI document's sha256. Part of the contract
    # (a changed script is drift); a capability without pins hashes as it always did.
    pins: Mapping[str, str]

    def __init__(self, source: str, name: str, input_schema: dict[str, Any], output_schema: dict[str, Any],
                 outcomes: tuple[str, ...] = ("ok",), description: str = "",
                 annotations: Mapping[str, Any] | None = None, code: str | None = None,
                 cache: bool | float | None = None, defaults: Mapping[str, Any] | None = None,
                 pins: Mapping[str, str] | None = None) -> None:
        init(self, "source", source)
        init(self, "name", name)
        init(self, "input_schema", input_schema)
        init(self, "output_schema", output_schema)
        init(self, "outcomes", outcomes)
        init(self, "description", description)
        init(self, "annotations", {} if annotations is None else annotations)
        init(self, "code", code)
        init(self, "cache", cache)
        init(self, "defaults", {} if defaults is None else defaults)
        init(self, "pins", {} if pins is None else pins)

    @property
    def ref(self) -> str:
        return f"{self.source}.{self.name}"

    @property
    def contract(self) -> dict[str, Any]:
        found = {"input_schema": self.input_schema, "output_schema": self.output_schema,
                 "outcomes": list(self.outcomes)}
        if self.defaults:
            found["defaults"] = dict(self.defaults)
        if self.pins:
            found["pins"] = dict(sorted(self.pins.items()))
        return found

    @property
    def contract_hash(self) -> str:
        return sha256_of(self.contract)

    @property
    def destructive(self) -> bool:
        """Whether its source says a call changes the world (an MCP tool's `destructiveHint`):
        such a call is never served from the step cache, which would skip the change."""
        hints = self.annotations
        return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True


class StepContext(Record):
    """What a step knows about where it runs (`$context`)."""

    __slots__ = ("run_id", "workflow", "deployment", "step", "attempt", "idempotency_key", "extra")

    run_id: str
    workflow: str
    deployment: str | None
    step: str
    attempt: int
    idempotency_key: str
    extra: Mapping[str, Any]

    def __init__(self, run_id: str, workflow: str, deployment: str | None, step: str, attempt: int,
                 idempotency_key: str, extra: Mapping[str, Any] | None = None) -> None:
        init(self, "run_id", run_id)
        init(self, "workflow", workflow)
        init(self, "deployment", deployment)
        init(self, "step", step)
        init(self, "attempt", attempt)
        init(self, "idempotency_key", idempotency_key)
        init(self, "extra", {} if extra is None else extra)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "workflow": self.workflow, "deployment": self.deployment,
                "step": self.step, "attempt": self.attempt, "idempotency_key": self.idempotency_key,
                **self.extra}


class CallResult(Record):
    __slots__ = ("outcome", "output", "extra")

    outcome: str
    output: dict[str, Any] | None
    # Data beside the output (a python node's `Result.extra`, an MCP result's `_meta` and the
    # structured keys its schema does not declare): kept in the trace entry, never in state.
    extra: dict[str, Any] | None

    def __init__(self, outcome: str = "ok", output: dict[str, Any] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        init(self, "outcome", outcome)
        init(self, "output", output)
        init(self, "extra", extra)


# `__init__` sets each field through `object.__setattr__`, which looks the field up anew each
# time: a third of what the engine spends making a step's context. The two made once per step
# (a context, a std result) are built here through their slots' own setters instead: the same
# objects, equal to what `__init__` makes, still frozen afterwards.
_new = object.__new__
_context_slots: dict[str, Any] = {name: StepContext.__dict__[name].__set__ for name in StepContext.__slots__}
_set_run_id, _set_workflow, _set_deployment, _set_step, _set_attempt, _set_key, _set_extra = (
    _context_slots[name] for name in ("run_id", "workflow", "deployment", "step", "attempt", "idempotency_key",
                                      "extra"))
_result_slots: dict[str, Any] = {name: CallResult.__dict__[name].__set__ for name in CallResult.__slots__}
_set_outcome, _set_output, _set_result_extra = (_result_slots[name] for name in ("outcome", "output", "extra"))


def step_context(run_id: str, workflow: str, deployment: str | None, step: str, attempt: int,
                 idempotency_key: str) -> StepContext:
    """`StepContext(run_id, workflow, deployment, step, attempt, idempotency_key)`, made faster."""
    context = _new(StepContext)
    _set_run_id(context, run_id)
    _set_workflow(context, workflow)
    _set_deployment(context, deployment)
    _set_step(context, step)
    _set_attempt(context, attempt)
    _set_key(context, idempotency_key)
    _set_extra(context, {})
    return context


def ok_result(output: dict[str, Any] | None) -> CallResult:
    """`CallResult("ok", output)`, made faster."""
    result = _new(CallResult)
    _set_outcome(result, "ok")
    _set_output(result, output)
    _set_result_extra(result, None)
    return result


@runtime_checkable
class Source(Protocol):
    """A concrete source. `capabilities()` is valid after `open()` (a no-op for local sources).

    `call` raises `wfops.errors.CapabilityError` (or any exception) for a failed call;
    the engine turns that into a step failure.
    """

    id: str
    kind: SourceKind

    async def open(self) -> None: ...

    def capabilities(self) -> Mapping[str, Capability]: ...

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult: ...

    async def close(self) -> None: ...


async def list_capabilities(source: Source) -> dict[str, Capability]:
    """Open a source, read its capabilities and close it again, in the caller's event loop.

    The source is closed even when opening failed (a half-started server must not be
    left behind), and a failure to close never hides the error that came first.
    """
    try:
        await source.open()
        return dict(source.capabilities())
    finally:
        with contextlib.suppress(Exception):
            await source.close()
