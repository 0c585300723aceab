"""Python sources served from recorded contracts, their modules not imported (`wfops validate` only).

Validation reads a python source's contracts and never calls it; importing the module just to
read them (pydantic models built, JSON Schemas generated) can cost more than the rest of a
validate. What is recorded, and when the record still holds, is decided above this layer
(`wfops.fastpath.contracts`); here is only what `build_sources` needs to use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from wfops.errors import CapabilityError
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext


class ContractRecord(Protocol):
    """Where `build_sources` may find the python sources' contracts without importing them."""

    def recorded(self, modules: Mapping[str, str]) -> dict[str, dict[str, Capability]] | None:
        """Source id -> its contracts, when the record was made for exactly these declarations
        (source id -> module) and nothing it depends on has changed since; else None."""
        ...

    def record(self, modules: Mapping[str, str],
               contracts: Mapping[str, Mapping[str, Capability]] | None) -> None:
        """After importing the declared modules: their contracts, or None when one of them
        failed (a failure is never served: its findings come from the import)."""
        ...


class RecordedSource:
    """A python source as recorded: its contracts, nothing to call."""

    def __init__(self, source_id: str, capabilities: Mapping[str, Capability]) -> None:
        self.id = source_id
        self.kind: SourceKind = "python"
        self._caps = dict(capabilities)

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return self._caps

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        raise CapabilityError(f"source {self.id!r} was not imported (validate read its recorded contracts); "
                              "only a run calls it, after importing it")

    async def close(self) -> None:
        return None
