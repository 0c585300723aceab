"""The capability catalog (`wfops caps`): what each source offers, from where, and calling one.

std and python sources are always read live (importing a python source is all it
takes). MCP servers are started only when the caller names them (`source=ID`, a
capability ref of theirs); otherwise their contracts come from wfops.lock, marked
as such, exactly as `validate` and `check` see them. Refs here are CONCRETE
(`<source id>.<capability>`, as in sources.yaml), not a workflow's logical names.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wfops.api.results import CallOutcome, Capabilities, CapabilityInfo
from wfops.diagnostics import Diagnostic
from wfops.engine.errors import failure_of
from wfops.errors import CallFailed, StepTimeout, WfopsError
from wfops.fastpath.contracts import ContractFile
from wfops.jsonvalues import check_json_value
from wfops.loader.project import SOURCES_FILE, load_project
from wfops.lockfile import read_lock
from wfops.sources.base import Capability, CapabilityRef, Source, StepContext, list_capabilities
from wfops.sources.contract import call_checked, max_output_bytes
from wfops.sources.registry import build_sources


@dataclass
class Catalog:
    root: Path
    sources: dict[str, Source]
    diagnostics: list[Diagnostic]   # why a declared source could not be loaded

    def require(self, source_id: str) -> Source:
        source = self.sources.get(source_id)
        if source is not None:
            return source
        why = next((d for d in self.diagnostics if d.is_error and d.source == source_id), None)
        if why is not None:
            raise WfopsError(f"source {source_id!r} is declared but could not be loaded: {why.message}",
                             hint="fix it; `wfops validate` reports it at sources.yaml")
        known = ", ".join(sorted(self.sources))
        raise WfopsError(f"unknown source {source_id!r}", hint=f"sources of this project: {known}")

    def listing(self, source_id: str | None = None) -> Capabilities:
        """Catalog entries (one source, or all), plus notes about MCP sources read from the lock."""
        ids = [source_id] if source_id else sorted(self.sources, key=lambda s: (s != "std", s))
        found: list[CapabilityInfo] = []
        notes: list[str] = []
        for sid in ids:
            source = self.require(sid)
            if source.kind != "mcp":
                found += [info(cap, source, "live") for _, cap in sorted(source.capabilities().items())]
            elif source_id:
                found += [info(cap, source, "live") for _, cap in sorted(open_live(source).items())]
            else:
                locked = self.locked(sid)
                # The lock snapshots only the tools workflows use: say so, or the list looks
                # complete and `wfops compile` looks like the way to fill it.
                if locked is None:
                    notes.append(f"{sid}: MCP source not in wfops.lock (no workflow uses it yet); "
                                 f"`wfops caps list --source {sid}` starts it and lists every tool")
                else:
                    notes.append(f"{sid}: only the tools workflows use, as wfops.lock holds them; "
                                 f"`wfops caps list --source {sid}` starts it and lists every tool")
                found += [info(cap, source, "lock") for _, cap in sorted((locked or {}).items())]
        mine = [d for d in self.diagnostics if d.file == SOURCES_FILE]
        return Capabilities(found, notes, mine)

    def locked(self, source_id: str) -> dict[str, Capability] | None:
        lock = read_lock(self.root)
        contracts = lock.source_capabilities(source_id) if lock is not None else None
        if not contracts:
            return None
        return {name: c.as_capability(source_id, name) for name, c in contracts.items()}

    def capability(self, ref: str) -> tuple[Source, Capability]:
        """Resolve a concrete `source.capability` ref (an MCP source is started to list it)."""
        parsed = CapabilityRef.parse(ref)
        source = self.require(parsed.source)
        caps = open_live(source) if source.kind == "mcp" else source.capabilities()
        cap = caps.get(parsed.name)
        if cap is None:
            raise WfopsError(f"source {parsed.source!r} has no capability {parsed.name!r}",
                             hint=f"`wfops caps list --source {parsed.source}` lists them")
        return source, cap

    def call(self, ref: str, payload: Any, *, timeout: float | None = None,
             on_ready: Callable[[], None] | None = None) -> CallOutcome:
        """Call one capability as a run's step would: input, outcome and output checked
        against its contract, within `timeout` seconds as a step's `timeout:` (and the source's
        own limits); any failure is `CallFailed` with the step error a run records. `on_ready`
        is told once the capability is resolved, just before the call."""
        check_json_value(payload, "input")
        max_output_bytes()  # read once before the call, as a run does: the limit its output is held to
        if not isinstance(payload, dict):
            raise CallFailed(f"{ref} failed: the input must be a mapping, not {type(payload).__name__}",
                             error={"type": "InvalidInput", "message": "the input must be a mapping",
                                    "step": ref})
        source, cap = self.capability(ref)
        if on_ready is not None:
            on_ready()
        try:
            result = asyncio.run(_invoke(source, cap, payload, timeout))
        except Exception as exc:  # noqa: BLE001 - the capability's own code: a failure, not a wfops crash
            failure = failure_of(exc)
            kind, message = failure.type, failure.message
            # wfops's own failures read as they are; foreign exceptions say their type.
            shown = message if isinstance(exc, WfopsError) else f"{kind}: {message}"
            raise CallFailed(f"{cap.ref} failed: {shown}", hint=getattr(exc, "hint", None),
                             error={"type": kind, "message": message, "step": cap.ref}) from None
        return CallOutcome(result.outcome, result.output)


def info(cap: Capability, source: Source, origin: Any) -> CapabilityInfo:
    return CapabilityInfo(cap.ref, cap.source, source.kind, cap.name, cap.description, list(cap.outcomes),
                          cap.contract_hash, origin, cap.input_schema, cap.output_schema,
                          dict(cap.annotations), dict(cap.defaults))


async def _invoke(source: Source, cap: Capability, payload: dict[str, Any], timeout: float | None) -> Any:
    run_id = f"call-{uuid.uuid4().hex[:12]}"
    context = StepContext(run_id=run_id, workflow="", deployment=None, step=cap.name, attempt=1,
                          idempotency_key=f"{run_id}:{cap.name}#1")
    await source.open()
    try:
        try:
            return await asyncio.wait_for(call_checked(source, cap, payload, context), timeout)
        except TimeoutError:
            raise StepTimeout(f"{cap.ref} did not finish within {timeout:g}s") from None
    finally:
        await source.close()


def load_catalog(root: Path, *, to_read: bool = False) -> Catalog:
    """`to_read`: the catalog is only read (listed, shown), never called, so the python
    sources' contracts may come from the contract record (`wfops.fastpath.contracts`) while
    its key holds, their modules not imported."""
    project = load_project(root)
    sources, diagnostics = build_sources(project, cached=ContractFile(project.root) if to_read else None)
    return Catalog(project.root, sources, [*project.diagnostics, *diagnostics])


def open_live(source: Source) -> dict[str, Capability]:
    """Start a source, read its capabilities, stop it (all in one event loop)."""
    return asyncio.run(list_capabilities(source))
