"""What the core API returns for a run: kept apart from the other results so that `wfops run`
builds only these classes (and `validate` none of them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from wfops.diagnostics import Diagnostic
from wfops.errors import UsageError

if TYPE_CHECKING:
    from wfops.engine.types import Interrupt, RunSnapshot

__all__ = ["RUN_DETAIL_KEYS", "RUN_KEYS", "Run", "RunDetails", "empty_run_object", "since_stamp"]

#: The JSON run object's keys, in the order every face prints them (`runs show` adds
#: `input` and `state` after these). Documented in docs/runs-and-durability.md.
RUN_KEYS = ("run_id", "deployment", "workflow", "artifact", "status", "outcome", "output", "error",
            "interrupt", "forked_from", "unlocked", "started_at", "ended_at", "duration_ms", "steps",
            "orphaned")
#: What `runs show` adds after them: the run's input and its state values.
RUN_DETAIL_KEYS = ("input", "state")
#: A run in one of these has ended: its `ended_at` is its last update.
ENDED = ("completed", "failed", "cancelled")
_STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # the store's fixed-width UTC stamps
_AGO = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_stamp(since: str, now: datetime | None = None) -> str:
    """`2h`, `30m`, `3d`, `1w`, `45s` ago, or an ISO date or time, as a store stamp."""
    text = since.strip()
    ago = _AGO.fullmatch(text)
    try:
        if ago:
            moment = (now or datetime.now(UTC)) - timedelta(seconds=float(ago[1]) * _UNITS[ago[2]])
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise UsageError(f"--since {since!r}: write an age such as 30m, 2h, 3d or 1w, or an ISO date "
                         "such as 2026-01-31 or 2026-01-31T09:00") from None
    return moment.strftime(_STAMP)


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
    unlocked: bool = False              # started with `--unlocked`: the working tree, not the lock

    @classmethod
    def of(cls, snapshot: RunSnapshot, **extra: Any) -> Run:
        return cls(snapshot.run_id, snapshot.workflow, snapshot.artifact, snapshot.deployment, snapshot.status,
                   snapshot.outcome, snapshot.output, snapshot.error, snapshot.interrupt, **extra)

    @property
    def ended_at(self) -> str | None:
        return self.updated_at if self.status in ENDED else None

    @property
    def duration_ms(self) -> int | None:
        """From start to end; None while the run has not ended (or its times are not known)."""
        if self.created_at is None or self.ended_at is None:
            return None
        try:
            took = datetime.strptime(self.ended_at, _STAMP) - datetime.strptime(self.created_at, _STAMP)
        except ValueError:
            return None
        return max(0, round(took.total_seconds() * 1000))

    def to_dict(self) -> dict[str, Any]:
        values = {"run_id": self.run_id, "deployment": self.deployment, "workflow": self.workflow,
                  "artifact": self.artifact, "status": self.status, "outcome": self.outcome,
                  "output": self.output, "error": self.error,
                  "interrupt": self.interrupt.to_public() if self.interrupt else None,
                  "forked_from": self.forked_from, "unlocked": self.unlocked, "started_at": self.created_at,
                  "ended_at": self.ended_at, "duration_ms": self.duration_ms, "steps": self.steps,
                  "orphaned": self.orphaned}
        found = {key: values[key] for key in RUN_KEYS}
        if self.slot is not None:  # only a scheduled run carries the key
            found["slot"] = self.slot
        if self.details is not None:
            input_key, state_key = RUN_DETAIL_KEYS
            found[input_key], found[state_key] = self.details.input, self.details.state
        return found


def empty_run_object(**given: Any) -> dict[str, Any]:
    """The run object's keys, all null but `given`: what a run that never started reports."""
    return {**dict.fromkeys(RUN_KEYS), "unlocked": False, "orphaned": False, **given}


@dataclass(frozen=True)
class RunDetails:
    """What `runs show` adds: the run's input and its state after its last committed step,
    both redacted as the trace is."""

    input: Any
    state: dict[str, Any] | None  # None: the store lacks the run's workflow artifact
