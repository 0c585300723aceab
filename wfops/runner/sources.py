"""Which concrete sources a run uses, and opening / closing them around it.

MCP sessions must be entered and left in the same asyncio task (anyio cancel
scopes), so `opened_sources` is used inside the task that drives the run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

from wfops.errors import RefusedError
from wfops.model.kinds import walk_steps
from wfops.sources.base import Capability, Source


def used_refs(workflows: Iterable[Any]) -> list[str]:
    """Every `uses:` ref (call and foreach steps) of the given workflow models."""
    refs: list[str] = []
    for workflow in workflows:
        for _at, step in walk_steps(workflow.steps):
            ref = getattr(step, "uses", None)
            if isinstance(ref, str) and ref not in refs:
                refs.append(ref)
    return refs


def used_sources(workflows: Iterable[Any], bindings: Mapping[str, str]) -> list[str]:
    ids: list[str] = []
    for ref in used_refs(workflows):
        logical = ref.partition(".")[0]
        concrete = bindings.get(logical, logical)
        if concrete not in ids:
            ids.append(concrete)
    return ids


@asynccontextmanager
async def opened_sources(sources: Mapping[str, Source], ids: Iterable[str]) -> AsyncIterator[dict[str, Source]]:
    """Open each source the run uses (a no-op for local ones); close them all afterwards."""
    opened: dict[str, Source] = {}
    try:
        for source_id in ids:
            source = sources.get(source_id)
            if source is None:
                raise RefusedError(f"source {source_id!r} is not declared in sources.yaml",
                                   hint="declare it, or fix the deployment's bindings")
            try:
                await source.open()
            except RefusedError:
                raise
            except Exception as exc:  # a server that will not start refuses the run, cleanly
                hint = getattr(exc, "hint", None) or "run `wfops check --live` to see what the source says"
                raise RefusedError(f"source {source_id!r} could not be started: {exc}", hint=hint) from None
            opened[source_id] = source
        yield opened
    finally:
        for source in reversed(list(opened.values())):
            # Closing must never hide the run's own result.
            with suppress(Exception):
                await source.close()


def live_catalog(opened: Mapping[str, Source]) -> dict[str, dict[str, Capability]]:
    return {source_id: dict(source.capabilities()) for source_id, source in opened.items()}
