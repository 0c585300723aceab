"""A frame is one running workflow: the top one, a subworkflow step's child, or one
item of a foreach over a workflow. Its position is rebuilt from the trace on resume.

Trace paths: a frame's own steps are `<prefix><step>`; a subworkflow child's steps are
`<prefix><step>/<child step>`; a foreach item is `<prefix><step>[i]` and its child
frame's steps `<prefix><step>[i]/<child step>`. Step ids never hold `/` or `[`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wfops.engine.plan import Plan
from wfops.engine.reducers import apply_write
from wfops.engine.types import TraceEntry
from wfops.model.paths import parse_save_target

_TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {}


@dataclass(slots=True)
class Frame:
    plan: Plan
    input: Any
    prefix: str = ""  # trace path prefix of its steps
    key_prefix: str = ""  # same, with visit numbers, for idempotency keys
    in_foreach: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    current: str = ""
    visits: dict[str, int] = field(default_factory=dict)
    outcome: str | None = None  # set when the frame finished
    error: dict[str, Any] | None = None  # set when the frame failed
    pending: list[TraceEntry] = field(default_factory=list)  # trace of the step in flight
    log: list[dict[str, Any]] | None = None  # a parallel branch's writes, in order, for the join

    @property
    def done(self) -> bool:
        return self.outcome is not None or self.error is not None


def new_frame(plan: Plan, input: Any, *, prefix: str = "", key_prefix: str = "",
              in_foreach: bool = False, trace: list[TraceEntry] | None = None) -> Frame:
    frame = Frame(plan, input, prefix, key_prefix, in_foreach, plan.fresh_state(), plan.start)
    if trace:
        restore(frame, trace)
    return frame


def replay_change(state: dict[str, Any], plan: Plan, change: dict[str, Any]) -> None:
    path = change["path"]
    target = _TARGETS.get(path)
    if target is None:
        target = _TARGETS[path] = parse_save_target(path)
    apply_write(state, plan.reducers, target[0], target[1], change["value"])


def replay(frame: Frame, changes: list[dict[str, Any]]) -> None:
    for change in changes:
        replay_change(frame.state, frame.plan, change)
    if frame.log is not None:
        frame.log.extend(changes)


def restore(frame: Frame, trace: list[TraceEntry]) -> None:
    """Rebuild state, visit counts and position from the committed entries of this frame
    (`trace` holds only entries under the frame's prefix, in seq order).

    A failure that is not routed (`error` without `next`) is no progress: the step it ended
    runs again when the run is resumed (a redrive of a failed run, or a crash mid-retry)."""
    prefix, cut = frame.prefix, len(frame.prefix)
    last_own = -1
    for entry in trace:
        rel = entry.step[cut:]
        if "/" in rel or "[" in rel:
            if entry.state_changes and "/" not in rel:  # a foreach item's `save_each` writes
                replay(frame, entry.state_changes)
            continue
        if entry.error is not None and entry.next is None:
            continue  # a failed attempt, or the failure a redrive retries: not progress
        last_own = entry.seq
        replay(frame, entry.state_changes)
        if entry.kind == "interrupt" and entry.outcome is None and entry.error is None:
            frame.current = rel  # an open interrupt: not a visit yet
        elif entry.kind == "end":
            frame.outcome = entry.outcome
        elif entry.next is not None:
            frame.visits[rel] = frame.visits.get(rel, 0) + 1
            if entry.next == "end":
                frame.outcome = "ok"
            else:
                frame.current = entry.next
    head = prefix + frame.current
    frame.pending = [e for e in trace if e.seq > last_own and e.step.startswith(head)
                     and e.step[len(head):len(head) + 1] in ("/", "[")]
