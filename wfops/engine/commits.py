"""Item entries that finish in one turn of the event loop, committed in one transaction.

The calls of a Dask chunk (and async items that end together) come back at once; their
item entries are one store transaction instead of one each. Each item still waits for its
own entry to be committed before it counts as done, so nothing is reported that is not
stored."""

from __future__ import annotations

import asyncio

from wfops.engine.run import RunContext
from wfops.engine.types import TraceEntry
from wfops.errors import UnstorableValue


class ItemCommits:
    """Used by a parallel foreach whose items write no state of their own (no `save_each`):
    their entries are independent, so a group's commit can fall back to one at a time."""

    def __init__(self, run: RunContext) -> None:
        self.run = run
        self._group: list[tuple[TraceEntry, asyncio.Future[None]]] = []

    async def commit(self, entry: TraceEntry) -> None:
        """Returns once `entry` is committed; `UnstorableValue` when it alone cannot be."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._group.append((entry, done))
        if len(self._group) == 1:
            # After every item already woken in this turn has queued its entry.
            loop.call_soon(self._flush)
        await done

    def _flush(self) -> None:
        # An item cancelled while it waited (the run stops) is not done: a resume runs it.
        group = [(entry, done) for entry, done in self._group if not done.done()]
        self._group = []
        if not group:
            return
        try:
            self.run.commit([entry for entry, _ in group])
        except UnstorableValue:
            # Nothing of the group was stored: commit them one by one, so only the item
            # whose value cannot be stored fails.
            self._one_by_one(group)
            return
        except BaseException as exc:  # noqa: BLE001 - a store error (or the end of the process) reaches every waiting item
            for _, done in group:
                done.set_exception(exc)
            return
        for _, done in group:
            done.set_result(None)

    def _one_by_one(self, group: list[tuple[TraceEntry, asyncio.Future[None]]]) -> None:
        for n, (entry, done) in enumerate(group):
            try:
                self.run.commit([entry])
            except UnstorableValue as exc:
                done.set_exception(exc)
            except BaseException as exc:  # noqa: BLE001 - the store failed: no later entry is tried
                for _, rest in group[n:]:
                    rest.set_exception(exc)
                return
            else:
                done.set_result(None)
