"""The `Store` protocol: everything the runner and the CLI need from a run store.

Two backends: SQLite (`wfops.store.sqlite`, a local file) and PostgreSQL
(`wfops.store.postgres`, shared by many machines). One contract test suite in
`tests/store/` runs against both.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from wfops.engine.types import RunSnapshot, TraceEntry

FINISHED = ("completed", "failed", "cancelled")  # what `prune` may delete


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A stored run: the engine's snapshot plus what only the store knows."""

    snapshot: RunSnapshot
    created_at: str
    updated_at: str
    steps: int                    # trace entries committed so far
    meta: Mapping[str, Any]       # runner data kept for resume: bindings, secret names


@dataclass(frozen=True, slots=True)
class Slot:
    """One time of a deployment's schedule entry: what a tick claims (`slot` in UTC,
    `2026-12-01T10:05:00Z`)."""

    deployment: str
    entry: str
    slot: str


@dataclass(frozen=True, slots=True)
class SlotRecord:
    """A claimed slot and the run it started (`status` None once that run was removed)."""

    slot: Slot
    run_id: str
    claimed_at: str
    status: str | None


class SlotTaken(Exception):
    """The slot a new run was to claim is claimed already: the run was not created."""

    def __init__(self, slot: Slot) -> None:
        super().__init__(f"slot {slot.slot} of {slot.deployment} ({slot.entry}) is taken")
        self.slot = slot


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs a history page shows; None matches any. `since`/`until`: UTC stamps
    (the store's own form) bounding `created_at`, `until` excluded."""

    deployment: str | None = None
    status: str | None = None
    outcome: str | None = None
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True, slots=True)
class StepLog:
    """What one attempt of a step printed and logged (bounded, masked), or the run's own log:
    step "", attempt 0, seq minus the entry it was stored with (0 before any)."""

    seq: int          # its trace entry (the run's own log: -seq of the entry it came before)
    step: str
    attempt: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "step": self.step, "attempt": self.attempt, "text": self.text, "cut": self.cut}

    @property
    def cut(self) -> int:
        """How many characters the size bound cut from the middle of `text` (0: it is whole)."""
        # deferred: the capture machinery (stream swap, logging handler) is off the store's import path
        from wfops.sources.steplogs import cut_chars

        return cut_chars(self.text)


class Store(Protocol):
    """A durable home for artifacts, runs and their traces.

    `commit` is the engine's durability point (`CheckpointSink`): the run row and the
    step's trace entries are written in ONE transaction, or not at all.
    """

    name: str  # how messages name the store: a path, or a URL without its password

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None: ...

    def begin_run(self, run_id: str, *, artifacts: Mapping[str, str],
                  normalized: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any],
                  texts: Mapping[str, str] | None = None, slot: Slot | None = None) -> None:
        """Remember which artifacts (workflow name -> hash) a run uses, before it starts.
        Idempotent; the run row itself appears with the engine's first `commit`. `texts`: the
        canonical JSON of some of `normalized` (by hash), when the caller holds it already; it
        is stored as given instead of serializing the form again. `slot`: the schedule slot the
        run claims in that first commit, which raises `SlotTaken` (creating nothing) when the
        slot is claimed already."""

    def get_run(self, run_id: str) -> RunRecord:
        """Raise `UnknownRunError` for an id the store does not hold."""

    def record_of(self, snapshot: RunSnapshot) -> RunRecord:
        """The record of a run just driven around the driver's own `snapshot` (its output as
        returned): only what the store adds (times, step count, meta) is read, not the run's
        input and output back (a million-item input would be decoded again, beside the one the
        caller holds). Raise `UnknownRunError` as `get_run` does."""

    def list_runs(self, *, deployment: str | None = None, status: str | None = None,
                  limit: int = 20, since: str | None = None, scheduled: bool = False) -> list[RunRecord]:
        """Newest first; `since`: created at or after that stamp; `scheduled`: only runs a
        schedule started."""

    def slots(self, deployment: str, *, entry: str | None = None, since: str | None = None,
              unfinished: bool = False, limit: int | None = None) -> list[SlotRecord]:
        """Claimed slots of a deployment (of one entry; at or after `since`; whose run is not
        finished), newest slot first."""

    def slot_of(self, run_id: str) -> SlotRecord | None:
        """The slot that started a run, or None for a run no schedule started."""

    def find_runs(self, filters: RunFilter, *, offset: int = 0, limit: int = 50) -> list[RunRecord]:
        """One page of the runs `filters` match, newest first."""

    def count_runs(self, filters: RunFilter) -> dict[str, int]:
        """Status -> how many runs match `filters` (its status left out)."""

    def trace(self, run_id: str, *, from_seq: int | None = None,
              limit: int | None = None) -> list[TraceEntry]:
        """Entries in seq order; raise `UnknownRunError` for an unknown id."""

    def add_step_logs(self, run_id: str, logs: list[StepLog]) -> None:
        """Keep the logs of some of a run's trace entries (one per seq; a seq kept already stays)."""

    def step_logs(self, run_id: str, step: str | None = None) -> list[StepLog]:
        """The run's step logs in seq order (only `step`'s, its attempts and foreach items,
        when given); raise `UnknownRunError` for an unknown id."""

    def run_workflows(self, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
        """Workflow name -> (artifact hash, normalized artifact) for everything the run uses."""

    def import_run(self, run: RunRecord, entries: list[TraceEntry],
                   workflows: Mapping[str, tuple[str, Mapping[str, Any]]]) -> bool:
        """Write a run read from another store (its record, whole trace and artifacts) in
        one transaction; False, writing nothing, when a run of that id is already here."""

    def delete_run(self, run_id: str) -> None:
        """Raise `UnknownRunError` for an unknown id."""

    def prune(self, older_than_days: float) -> int:
        """Delete stopped (completed, failed or cancelled) runs last updated before the cutoff."""

    def request_cancel(self, run_id: str) -> None:
        """Ask the process driving the run to stop it (it polls `cancel_requested`)."""

    def cancel_requested(self, run_id: str) -> bool:
        """True while a cancel request for the run is pending."""

    def clear_cancel(self, run_id: str) -> None:
        """Drop the run's cancel request (a new drive of the run starts)."""

    def mark_cancelled(self, run_id: str) -> None:
        """Set a run nobody drives to `cancelled` at once (the caller holds its lock)."""

    def fork_run(self, source_id: str, new_id: str, *, upto_seq: int, input: Any,
                 meta: Mapping[str, Any]) -> None:
        """Create run `new_id` from run `source_id`: the same artifacts, `input`, `meta`, and a
        copy of its trace entries up to `upto_seq`; status `running`, for a driver to continue."""

    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        """Hold the exclusive right to drive a run; raise `RunBusyError` at once if held."""

    def run_is_driven(self, run_id: str) -> bool:
        """True while some live process holds the run's lock."""

    def forget_runs(self) -> None:
        """Forget the per-run memory of the runs this object drove (a store kept open across runs)."""

    def close(self) -> None: ...

