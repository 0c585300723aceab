"""The engine's checkpoint sink for runs: commit each step to the store, then tell the caller."""

from __future__ import annotations

from collections.abc import Callable

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.store.protocol import Store

OnStep = Callable[[TraceEntry], None]


class ProgressSink:
    """The engine's `CheckpointSink`: commit to the store first, then report."""

    def __init__(self, store: Store, on_step: OnStep | None = None,
                 on_start: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.on_step = on_step
        self.on_start = on_start  # told the run id once, when the run is first in the store

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.store.commit(run, entries)
        if self.on_start is not None:
            started, self.on_start = self.on_start, None
            started(run.run_id)
        if self.on_step is not None:
            for entry in entries:
                self.on_step(entry)
