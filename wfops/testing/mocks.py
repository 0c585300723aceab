"""The seams a test case runs through: a resolver that answers calls from the case's
mocks (checked against the capability contracts) and an in-memory checkpoint sink.

Mock keys (docs/testing.md): a key with a dot is a capability ref, the workflow's
logical ref as written in `uses:`; any other key is a step: a trace path
(`sub/fetch`, `fan[2]`) or a step id (`fetch`, `fan`). For a call at trace path
`p` the keys tried are: `p`, its last segment (`fan[2]`), that segment's id (`fan`),
then the ref. A list of results answers successive calls under its key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import CapabilityError
from wfops.model.wftest import Answer, MockResult
from wfops.sources.base import CallResult, Capability, Source, StepContext
from wfops.sources.contract import ContractError, call_checked, check_result

_INDEX = re.compile(r"\[\d+\]$")


def step_keys(path: str) -> list[str]:
    """The step keys that may answer the call or interrupt at trace path `path`, most specific first."""
    last = path.rsplit("/", 1)[-1]
    keys = [path, last, _INDEX.sub("", last)]
    return list(dict.fromkeys(keys))


class TestProblem(CapabilityError):
    """The test itself is wrong (recorded on the case; the step fails with `TestError`)."""

    __test__ = False
    error_type = "TestError"


class MemorySink:
    """Keeps every committed trace entry and the last snapshot."""

    def __init__(self) -> None:
        self.entries: list[TraceEntry] = []
        self.last: RunSnapshot | None = None

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.entries.extend(entries)
        self.last = run


class Successive:
    """Hands out the results under one key in turn; a single result answers every time."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        self.items = items
        self.used: dict[str, int] = {}

    def take(self, key: str) -> tuple[Any, str | None]:
        """(the next result, None) or (None, why there is none left)."""
        value = self.items[key]
        if not isinstance(value, list):
            return value, None
        n = self.used.get(key, 0)
        if n >= len(value):
            return None, f"the {len(value)} result(s) under {key!r} are used up (call {n + 1})"
        self.used[key] = n + 1
        return value[n], None


class MockResolver:
    """A `CapabilityResolver` for one case: mocks first; `std` and the case's `real:` refs
    through the real sources; anything else is refused."""

    def __init__(self, contracts: Mapping[str, Capability], mocks: Mapping[str, MockResult | list[MockResult]],
                 real: set[str], sources: Mapping[str, Source], bindings: Mapping[str, str]) -> None:
        self.contracts = contracts           # logical ref -> contract (from wfops.lock, else live)
        self.mocks = Successive(mocks)
        self.real = real
        self.sources = sources
        self.bindings = bindings
        self.problems: list[str] = []

    def problem(self, message: str) -> TestProblem:
        if message not in self.problems:
            self.problems.append(message)
        return TestProblem(message)

    def capability(self, ref: str) -> Capability:
        cap = self.contracts.get(ref)
        if cap is None:
            raise self.problem(f"no contract for {ref!r} in wfops.lock or its source; run `wfops compile`")
        return cap

    async def call(self, ref: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        cap = self.capability(ref)
        key = next((k for k in (*step_keys(context.step), ref) if k in self.mocks.items), None)
        if key is None:
            return await self._real(ref, cap, payload, context)
        mock, why = self.mocks.take(key)
        if mock is None:
            raise self.problem(f"step {context.step}: {why}")
        assert isinstance(mock, MockResult)
        if mock.error is not None:
            if isinstance(mock.error, str):
                failure = CapabilityError(mock.error)
            else:
                failure = CapabilityError(mock.error.message)
                failure.error_type = mock.error.type
            raise failure
        try:
            check_result(cap, mock.outcome, mock.output)
        except ContractError as exc:
            raise self.problem(f"step {context.step}: the mock {key!r} breaks the contract of {ref}: "
                               f"{exc.message}") from None
        return CallResult(mock.outcome, mock.output)

    async def _real(self, ref: str, cap: Capability, payload: dict[str, Any], context: StepContext) -> CallResult:
        logical = ref.partition(".")[0]
        if logical != "std" and ref not in self.real:
            raise self.problem(f"step {context.step} calls {ref}, which this case does not mock; mock it "
                               f"(`mocks: {{{ref}: ...}}` or by step id) or allow it with `real: [{ref}]`")
        source = self.sources.get(self.bindings.get(logical, logical))
        if source is None:
            raise self.problem(f"step {context.step}: the source of {ref} is not available")
        return await call_checked(source, cap, payload, context)


def answer_for(answers: Successive, path: str) -> tuple[Answer | None, str | None]:
    key = next((k for k in step_keys(path) if k in answers.items), None)
    if key is None:
        return None, None
    value, why = answers.take(key)
    return value, why
