"""What the core API returns for a run: kept apart from the other results so that `wfops run`
builds only these classes (and `validate` none of them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from wfops.diagnostics import Diagnostic

if TYPE_CHECKING:
    from wfops.engine.types import Interrupt, RunSnapshot

__all__ = ["Run", "RunDetails"]


@dataclass(frozen=True)
class Run:
    """A run as the store holds it. `to_dict()` is the documented JSON run object."""

    run_id: str
    workflow: str
    artifact: str
    deployment: str | None
    status: Literal["running", "completed", "failed", "interrupted", "cancelled"]
    outcome: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    interrupt: Interrupt | None = None
    warnings: list[Diagnostic] = field(default_factory=list)  # e.g. drift under `drift: warn`
    steps: int | None = None            # trace entries committed (when read from the store)
    created_at: str | None = None
    updated_at: str | None = None
    orphaned: bool = False              # `running`, but no process drives it: resume it
    forked_from: dict[str, Any] | None = None  # {run_id, step, seq}: the run and step a fork started from
    details: RunDetails | None = None   # input and state (`get_run`)
    slot: dict[str, str] | None = None  # {deployment, entry, slot}: the schedule slot that started it

    @classmethod
    def of(cls, snapshot: RunSnapshot, **extra: Any) -> Run:
        return cls(snapshot.run_id, snapshot.workflow, snapshot.artifact, snapshot.deployment, snapshot.status,
                   snapshot.outcome, snapshot.output, snapshot.error, snapshot.interrupt, **extra)

    def to_dict(self) -> dict[str, Any]:
        found = {"run_id": self.run_id, "deployment": self.deployment, "workflow": self.workflow,
                 "artifact": self.artifact, "status": self.status, "outcome": self.outcome,
                 "output": self.output, "error": self.error,
                 "interrupt": self.interrupt.to_public() if self.interrupt else None,
                 "forked_from": self.forked_from}
        if self.slot is not None:  # only a scheduled run carries the key
            found["slot"] = self.slot
        if self.details is not None:
            found["input"] = self.details.input
            found["state"] = self.details.state
        return found


@dataclass(frozen=True)
class RunDetails:
    """What `runs show` adds: the run's input and its state after its last committed step,
    both redacted as the trace is."""

    input: Any
    state: dict[str, Any] | None  # None: the store lacks the run's workflow artifact
