"""The engine's checkpoint sink for runs: commit each step to the store, then tell the caller.

A step's log (what its python node printed and logged in that attempt) is stored right after
the step's trace entry, under the entry's seq."""

from __future__ import annotations

from collections.abc import Callable

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.sources.steplogs import take
from wfops.store.protocol import StepLog, Store

OnStep = Callable[[TraceEntry], None]


class ProgressSink:
    """The engine's `CheckpointSink`: commit to the store first, then report."""

    def __init__(self, store: Store, on_step: OnStep | None = None,
                 on_start: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.on_step = on_step
        self.on_start = on_start  # told the run id once, when the run is first in the store

    def step_started(self, path: str, kind: str, total: int | None, done: int) -> None:
        """The engine's progress notice, passed on to an `on_step` that takes it."""
        notice = getattr(self.on_step, "step_started", None)
        if notice is not None:
            notice(path, kind, total, done)

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.store.commit(run, entries)
        self._committed(run, entries)

    def commit_items(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.store.commit_items(run, entries)
        self._committed(run, entries)

    def _committed(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        logs = [StepLog(e.seq, e.step, e.attempt, text) for e in entries
                if (text := take(run.run_id, e.step, e.attempt)) is not None]
        if logs:
            self.store.add_step_logs(run.run_id, logs)
        if self.on_start is not None:
            started, self.on_start = self.on_start, None
            started(run.run_id)
        if self.on_step is not None:
            for entry in entries:
                self.on_step(entry)
