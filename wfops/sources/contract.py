"""A capability's contract, enforced: the one check of what a call returns.

A run's steps and `Project.call` (`wfops caps call`, the MCP `call_capability` tool)
all call through `call_checked`, so a node whose output a run rejects fails a lone
call the same way. The platform source `std` is trusted: its outputs are wfops's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from wfops.errors import CapabilityError, UsageError
from wfops.jsonvalues import json_problem, json_size_over, non_finite_problem, plain_size_bound
from wfops.schemacheck import first_error
from wfops.sources.base import CallResult, Capability, Source, StepContext

if TYPE_CHECKING:
    from pydantic import BaseModel

TRUSTED_SOURCES = frozenset({"std"})
PLAIN_JSON = "a capability's output must be plain JSON"

#: The environment variable that sets the largest output a call may return, in bytes of JSON.
MAX_OUTPUT_ENV = "WFOPS_MAX_OUTPUT_BYTES"
#: 16 MiB: every output is stored in the run's trace and read back by `runs trace`, resumes
#: and the MCP tools, so one runaway node must not grow the store by gigabytes.
DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024


#: The limit `check_result` holds outputs to, as `max_output_bytes()` last read it (None: not
#: read yet, so the first check reads it). Runs and lone calls (`Project.call`) read the
#: environment once before they start, not on every call of their capabilities.
_limit: int | None = None


def max_output_bytes() -> int:
    """The output size limit: `WFOPS_MAX_OUTPUT_BYTES` when set, else 16 MiB. A value that is
    not a positive whole number is a `UsageError` (runs check it before they start). The
    value read is the one the calls after it are checked against."""
    global _limit
    text = os.environ.get(MAX_OUTPUT_ENV, "").strip()
    if not text:
        _limit = DEFAULT_MAX_OUTPUT
        return _limit
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise UsageError(f"{MAX_OUTPUT_ENV}={text[:40]!r} is not a positive whole number of bytes",
                         hint=f"unset it for the default ({DEFAULT_MAX_OUTPUT:,} bytes, 16 MiB), or give e.g. 67108864")
    _limit = int(text)
    return _limit


class ContractError(CapabilityError):
    """A call that broke its capability's contract; `error_type` says which part."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def check_result(cap: Capability, outcome: str, output: Any, bound: int | None = None) -> None:
    """Refuse a result its contract does not allow. `bound`: `plain_size_bound(output)` when the
    caller has just walked the output for it (a python node's one dump), so it is not walked twice."""
    if outcome not in cap.outcomes:
        raise ContractError("UndeclaredOutcome", f"{cap.ref} returned outcome {outcome!r}; it declares "
                            f"{', '.join(cap.outcomes)}")
    # Every source, std included: what a call returns is stored, printed and fed to later
    # steps, so a value JSON cannot carry (NaN, an integer too long to print, a lone
    # surrogate) fails the step here, where it enters, never at the store.
    limit = _limit if _limit is not None else max_output_bytes()
    if bound is None:
        bound = plain_size_bound(output)  # the common case: plain JSON, well under the limit, in one walk
    if bound is None:
        problem = json_problem(output, f"{cap.ref} output")
        if problem is not None:
            raise ContractError("InvalidOutput", f"{problem}; {PLAIN_JSON}")
    size = json_size_over(output, limit) if bound is None or bound > limit else None
    if size is not None:
        raise ContractError("InvalidOutput", f"{cap.ref} output is {size:,} bytes of JSON, over the limit of "
                            f"{limit:,} bytes ({MAX_OUTPUT_ENV}); return a reference to large data (a path "
                            "or URL) instead, or raise the limit")
    if output is not None and cap.source not in TRUSTED_SOURCES:
        problem = first_error(cap.output_schema, output)
        if problem is not None:
            raise ContractError("InvalidOutput", f"{cap.ref} output does not match its output schema: {problem}")


def model_output(ref: str, model: BaseModel, python: Any = None) -> Any:
    """A node's returned model as the JSON its output is. pydantic's JSON mode writes a NaN or
    an infinity held in a field typed `Any` as null (a `float` field keeps it), which would
    store a value the node never returned; the python dump (`python`, when the caller has
    it) still holds the number, so it is looked for there first and refused as
    `check_result` refuses any other."""
    dumped = model.model_dump(mode="python") if python is None else python
    problem = non_finite_problem(dumped, f"{ref} output")
    if problem is not None:
        raise ContractError("InvalidOutput", f"{problem}; {PLAIN_JSON}")
    return model.model_dump(mode="json")


async def call_checked(source: Source, cap: Capability, payload: Any, context: StepContext) -> CallResult:
    """Call `cap` on `source` and check its result against the contract. The input is the
    source's to judge, as it declared it: a python node's model, an MCP server's schema,
    std's own checks (each says what is wrong in its own words)."""
    return await checked_caller(source, cap)(payload, context)


CheckedCall = Callable[[Any, StepContext], Coroutine[Any, Any, CallResult]]


def checked_caller(source: Source, cap: Capability) -> CheckedCall:
    """`call_checked(source, cap, ...)` as a function of the payload and context, what it
    looks up on the source asked once: for the many calls of one capability in a run."""
    name = cap.name
    sized = getattr(source, "call_sized", None)
    if sized is not None:  # it tells its output's size bound too: `PythonSource.call_sized`
        async def call(payload: Any, context: StepContext) -> CallResult:
            result, bound = await sized(name, payload, context)
            return _checked(cap, result, bound)
    else:
        async def call(payload: Any, context: StepContext) -> CallResult:
            return _checked(cap, await source.call(name, payload, context), None)
    return call


def _checked(cap: Capability, result: CallResult, bound: int | None) -> CallResult:
    check_result(cap, result.outcome, result.output, bound)
    if result.extra is not None:
        # Extras are stored with the trace entry: plain JSON, as outputs are.
        problem = json_problem(result.extra, f"{cap.ref} extra data") if isinstance(result.extra, dict) \
            else f"{cap.ref} extra data is not a mapping"
        if problem is not None:
            raise ContractError("InvalidOutput", f"{problem}; {PLAIN_JSON}")
    return result


def split_undeclared(output: dict[str, Any], declared: Any, extra: dict[str, Any] | None
                     ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(output, extra) with the output keys `declared` (a schema's `properties`) does not name
    moved to the extras: undeclared keys are the trace's, never state's. No `properties`:
    every key counts as declared."""
    if not isinstance(declared, dict) or output.keys() <= declared.keys():
        return output, extra
    moved = {key: value for key, value in output.items() if key not in declared}
    return {key: value for key, value in output.items() if key in declared}, {**(extra or {}), **moved}


#: A node's exception message is stored and printed: longer ones are cut here.
MAX_MESSAGE = 4000


def raised(exc: BaseException) -> tuple[str, str]:
    """The (type, message) a failed call is reported with, from the exception a capability raised.

    The exception is foreign code: its `__str__`, `message` or `error_type` may raise, be
    no string, be huge or hold text that is not Unicode; none of that may end the run (or,
    on a Dask worker, the task: the driver must get the same answer a local call gives)."""
    name = type(exc).__name__
    type_ = _text_of(lambda: getattr(exc, "error_type", None)) or name
    message = _text_of(lambda: getattr(exc, "message", None)) or _text_of(lambda: str(exc)) or name
    return type_[:200], message


def _text_of(read: Callable[[], object]) -> str | None:
    try:
        value = read()
        if not isinstance(value, str):
            return None
        # Lone surrogates cannot be stored or printed: shown as escapes instead.
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    except Exception:  # noqa: BLE001 - a broken __str__ leaves the type name to speak
        return None
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "... (cut)"
