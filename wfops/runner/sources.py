"""Which concrete sources a run uses, and opening / closing them around it.

MCP sessions must be entered and left in the same asyncio task (anyio cancel
scopes), so `opened_sources` is used inside the task that drives the run.
"""

from __future__ import annotations

import asyncio
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
    """Open each source the run uses, all at once (an MCP server takes seconds to start; two
    of them should not take twice as long); close them all afterwards."""
    ids = list(ids)
    missing = next((i for i in ids if i not in sources), None)
    if missing is not None:
        raise RefusedError(f"source {missing!r} is not declared in sources.yaml",
                           hint="declare it, or fix the deployment's bindings")
    opened: dict[str, Source] = {}
    try:
        results = await asyncio.gather(*(_open(i, sources[i]) for i in ids), return_exceptions=True)
        for source_id, result in zip(ids, results, strict=True):
            if result is None:
                opened[source_id] = sources[source_id]
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            raise failure  # the first source (in the run's order) that would not start
        yield opened
    finally:
        for source in reversed(list(opened.values())):
            # Closing must never hide the run's own result.
            with suppress(Exception):
                await source.close()


async def _open(source_id: str, source: Source) -> None:
    try:
        await source.open()
    except RefusedError:
        raise
    except Exception as exc:  # a server that will not start refuses the run, cleanly
        hint = getattr(exc, "hint", None) or "run `wfops check --live` to see what the source says"
        raise RefusedError(f"source {source_id!r} could not be started: {exc}", hint=hint) from None


def live_catalog(opened: Mapping[str, Source]) -> dict[str, dict[str, Capability]]:
    return {source_id: dict(source.capabilities()) for source_id, source in opened.items()}
