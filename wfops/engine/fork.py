"""Where a fork starts: the part of a run's trace that holds its state just before a step."""

from __future__ import annotations

from collections.abc import Sequence

from wfops.engine.types import TraceEntry
from wfops.errors import RefusedError


def fork_point(trace: Sequence[TraceEntry], step: str, run_id: str) -> int:
    """The seq of the last entry to copy so that a run restored from the copy stands at the
    first visit of top-level `step`, with the state it had then (0: the run's very start).

    The step's own entry is committed when it ends, after its nested entries (a foreach's
    items, a subworkflow's steps) and its failed attempts: all of those come after the
    top-level entry that routed to it, so that entry is the cut."""
    if "/" in step or "[" in step:
        raise RefusedError(f"cannot fork from {step!r}: give a step of the run's own workflow",
                           hint="a fork starts before a top-level step; `wfops runs trace` lists them")
    cut = 0
    for entry in sorted(trace, key=lambda e: e.seq):
        if "/" in entry.step or "[" in entry.step:
            continue
        if entry.step == step:
            return cut
        if entry.error is None or entry.next is not None:  # an unrouted failure is no progress
            cut = entry.seq
    raise RefusedError(f"run {run_id} never reached step {step!r}; nothing to fork from there",
                       hint=f"`wfops runs trace {run_id}` shows the steps it ran")
