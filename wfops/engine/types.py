"""Data the engine hands out: trace entries, run snapshots, and the two seams it depends on.

These are the contract between the engine and any store (`wfops.store`) or face
(CLI, MCP). Everything in them is plain JSON-able data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from wfops.sources.base import CallResult, Capability, StepContext

RunStatus = Literal["running", "completed", "failed", "interrupted", "cancelled"]


@dataclass(slots=True)
class TraceEntry:
    """One executed step (a trace entry, docs/engine.md). `step` is a path for nested frames, e.g. `fan[2]/inner`.

    `state_changes` is the list of writes the step made, each
    `{"path": "state.x.y", "value": <written value>}`, in the order applied. Replaying
    the writes of all entries of a frame through the workflow's reducers rebuilds its state,
    so no full-state snapshot is ever stored.
    """

    seq: int
    step: str
    kind: str
    attempt: int
    input: Any
    outcome: str | None
    output: Any
    state_changes: list[dict[str, Any]]
    next: str | None
    error: dict[str, Any] | None
    started_at: str
    ended_at: str
    # What the capability returned beside its output (`CallResult.extra`): stored and shown
    # with the entry, never saved to state nor readable by later steps.
    extra: dict[str, Any] | None = None
    # A step served from the step cache: where its result came from (`run_id`, `step`, `seq`)
    # and the seconds the original call took (`saved`). Shown as `cached: true` + `cached_from`.
    cached: dict[str, Any] | None = None
    # For the store alone, never shown: the cache entry this step's success is saved as (or
    # the key its hit came from), written in the same transaction as the entry.
    cache_note: CacheNote | None = None

    def to_dict(self) -> dict[str, Any]:
        shown = asdict(self)
        del shown["cache_note"]
        origin = shown.pop("cached")
        if origin is not None:
            shown["cached"] = True
            shown["cached_from"] = origin
        return shown


@dataclass(frozen=True, slots=True)
class CacheNote:
    """What the step cache keeps of a call step: its key, the capability behind it and its
    contract hash, and how long the call took (the time a hit saves)."""

    key: str
    capability: str
    contract: str
    seconds: float
    expires: float | None = None  # seconds the entry is served (its `ttl`); None: no expiry


@dataclass(frozen=True, slots=True)
class CachedResult:
    """A success the step cache holds: its outcome, output and extras, and the step that made it."""

    outcome: str
    output: Any
    run_id: str
    step: str
    seq: int
    seconds: float
    extra: dict[str, Any] | None = None


@dataclass(slots=True)
class Interrupt:
    id: str
    step: str
    kind: str
    request: Any
    outcomes: list[str] = field(default_factory=list)
    resume_schema: dict[str, Any] | None = None

    def to_public(self) -> dict[str, Any]:
        return {"id": self.id, "step": self.step, "kind": self.kind, "request": self.request}


@dataclass(slots=True)
class RunSnapshot:
    """The run as it stands after a step. `cursor` is the engine's own small JSON that says
    where to continue (frames, current steps, foreach progress); it never holds the full state."""

    run_id: str
    workflow: str
    artifact: str
    deployment: str | None
    status: RunStatus
    input: Any = None
    outcome: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    interrupt: Interrupt | None = None
    cursor: dict[str, Any] = field(default_factory=dict)

    def to_public(self) -> dict[str, Any]:
        """The documented `--json` run object."""
        return {"run_id": self.run_id, "deployment": self.deployment, "workflow": self.workflow,
                "artifact": self.artifact, "status": self.status, "outcome": self.outcome,
                "output": self.output, "error": self.error,
                "interrupt": self.interrupt.to_public() if self.interrupt else None}


class CheckpointSink(Protocol):
    """Receives every step's trace entry together with the run snapshot after it.

    The store commits both in ONE transaction before the engine starts the next step.
    `commit` is synchronous on purpose: it is the durability point. The entries of a
    fan-out's items that finished together come in one `commit` too (a group commit): each
    its own trace entry, every one durable when it returns, none on failure.
    """

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None: ...

class CancelSignal(Protocol):
    """Says whether someone asked to stop a run; the engine polls it while it drives one.

    Polled every `CANCEL_POLL` seconds (and so must be cheap), from the loop's thread."""

    def requested(self, run_id: str) -> bool: ...


class StepCache(Protocol):
    """Where call steps' successes are kept (the run store's cache table). A hit is committed
    through the `CheckpointSink` like any step; a new success rides on its trace entry's
    `cache_note`, so the store writes both in one transaction."""

    def cache_lookup(self, key: str, max_age: float | None) -> CachedResult | None:
        """The success stored under `key` no older than `max_age` seconds (None: any age)."""


class CapabilityResolver(Protocol):
    """Finds the capability behind a workflow's `uses: logical.name` and calls it."""

    def capability(self, ref: str) -> Capability: ...

    async def call(self, ref: str, payload: dict[str, Any], context: StepContext) -> CallResult: ...
