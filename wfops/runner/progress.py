"""The engine's checkpoint sink for runs: commit each step to the store, then tell the caller.

A step's log (what its python node printed and logged in that attempt, what its MCP tool sent
as log notifications) is stored right after the step's trace entry, under the entry's seq. The
run's own log (lines no one step is known to have written) is stored with the commit that
follows them, under minus that commit's last seq (`runs logs` shows it before that entry)."""

from __future__ import annotations

from collections.abc import Callable

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.sources.steplogs import RUN_LOG, take, take_run, waiting
from wfops.store.protocol import StepLog, Store

OnStep = Callable[[TraceEntry], None]


class ProgressSink:
    """The engine's `CheckpointSink`: commit to the store first, then report."""

    def __init__(self, store: Store, on_step: OnStep | None = None,
                 on_start: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.on_step = on_step
        self.on_start = on_start  # told the run id once, when the run is first in the store
        self._run_logs_at: set[int] = set()  # the seqs of the run logs stored by this sink

    @property
    def step_started(self) -> Callable[[str, str, int | None, int], None] | None:
        """The engine's progress notice `(path, kind, total, done)`: the `on_step`'s own, or
        None when it takes none (the engine then builds no notice at all)."""
        return getattr(self.on_step, "step_started", None)

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.store.commit(run, entries)
        if waiting():
            self._store_logs(run, entries)
        if self.on_start is not None:
            started, self.on_start = self.on_start, None
            started(run.run_id)
        if self.on_step is not None:
            for entry in entries:
                self.on_step(entry)

    def _store_logs(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        logs = [StepLog(e.seq, e.step, e.attempt, text) for e in entries
                if (text := take(run.run_id, e.step, e.attempt)) is not None]
        at = -(entries[-1].seq if entries else int(run.cursor.get("seq") or 0))
        # A second run log at one seq (a commit without entries after one with) would be
        # refused by the store: it waits for the next commit, unless the run has ended.
        ended = run.status != "running"
        if at not in self._run_logs_at or ended:
            while at in self._run_logs_at:
                at -= 1
            if (text := take_run(run.run_id, ended=ended)) is not None:
                logs.append(StepLog(at, RUN_LOG, 0, text))
                self._run_logs_at.add(at)
        if logs:
            self.store.add_step_logs(run.run_id, logs)
