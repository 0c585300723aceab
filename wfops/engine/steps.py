"""One executor per step kind. Each returns a Transition; the frame loop commits it."""

from __future__ import annotations

import time
from typing import Any

from wfops.engine.cache import UNASKED, Lookup, look_up, origin_of
from wfops.engine.errors import StepFailed
from wfops.engine.foreach import run_foreach
from wfops.engine.frame import Frame
from wfops.engine.parallel import run_parallel
from wfops.engine.plan import StepPlan
from wfops.engine.run import Executor, RunContext, Transition, now
from wfops.engine.types import Interrupt, TraceEntry
from wfops.model.kinds import StepKind


def _visit(frame: Frame, sp: StepPlan) -> tuple[str, str]:
    """(trace path, idempotency key base) of this execution of the step."""
    visit = frame.visits.get(sp.id, 0) + 1
    return frame.prefix + sp.id, f"{frame.key_prefix}{sp.id}#{visit}"


async def run_call(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    path, key = _visit(frame, sp)
    started = now()
    ctx = run.context(frame, path, 1, key)
    payload = sp.with_(run.scope(frame, ctx)) if sp.with_ else {}
    # A step that declares no `cache:` and whose capability has no cache default is never
    # cached (`cache.policy`): told without a lookup, as most steps are.
    cached = look_up(run, frame, sp, ctx, payload) if run.engine.cache is not None and (
        sp.cache is not None or run.cache_policies.get(sp.uses or "", UNASKED) is not None) else None
    if cached is not None and cached.hit is not None:
        return _served(run, frame, sp, path, payload, cached, started)
    clock = time.monotonic() if cached is not None else 0.0  # the time a later hit saves
    attempt, extra = 1, None
    try:
        outcome, output, attempt, extra = await run.call(sp, payload, ctx, started)
        target = run.route(sp, outcome, path)
        state, changes = run.stage(frame, sp.save, output)
    except StepFailed as failure:
        attempt = max(attempt, failure.attempt)
        return run.fail(frame, sp, path, failure, kind="call", input=payload, attempt=attempt, started=started)
    entry = run.entry(path, "call", attempt, payload, outcome, output, changes, target, None, started, extra)
    if cached is not None:  # a success of a cached step: the store keeps it with the entry
        entry.cache_note = cached.note(time.monotonic() - clock)
    return Transition(entry, state)


def _served(run: RunContext, frame: Frame, sp: StepPlan, path: str, payload: Any, cached: Lookup,
            started: str) -> Transition:
    """A cache hit, committed like the call it stands for (its routes and `save` applied now)."""
    hit = cached.hit
    assert hit is not None
    try:
        target = run.route(sp, hit.outcome, path)
        state, changes = run.stage(frame, sp.save, hit.output)
    except StepFailed as failure:
        return run.fail(frame, sp, path, failure, kind="call", input=payload, attempt=1, started=started)
    entry = run.entry(path, "call", 1, payload, hit.outcome, hit.output, changes, target, None, started,
                      hit.extra)
    entry.cached = origin_of(hit)
    entry.cache_note = cached.note(0.0)
    return Transition(entry, state)


async def run_subworkflow(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    path, key = _visit(frame, sp)
    started = now()
    ctx = run.context(frame, path, 1, key)
    child_input = sp.with_(run.scope(frame, ctx)) if sp.with_ else {}
    try:
        outcome, output = await run.run_child(sp.workflow or "", child_input, prefix=path + "/",
                                              key_prefix=key + "/", in_foreach=frame.in_foreach,
                                              trace=pending, timeout=sp.timeout)
        target = run.route(sp, outcome, path)
        state, changes = run.stage(frame, sp.save, output)
    except StepFailed as failure:
        error = failure.as_error(failure.inner_step or path)
        return run.fail(frame, sp, path, failure, kind="workflow", input=child_input, attempt=1,
                        started=started, error=error)
    return Transition(run.entry(path, "workflow", 1, child_input, outcome, output, changes, target, None,
                                started), state)


async def run_condition(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    path, key = _visit(frame, sp)
    started = now()
    scope = run.scope(frame, run.context(frame, path, 1, key))
    outcome = "then" if sp.condition and sp.condition(scope) else "else"
    shown = sp.condition_value(scope) if sp.condition_value else None
    return Transition(run.entry(path, "condition", 1, shown, outcome, None, [], sp.routes[outcome], None,
                                started), frame.state)


async def run_interrupt(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    path, key = _visit(frame, sp)
    started = now()
    ctx = run.context(frame, path, 1, key)
    request = sp.request(run.scope(frame, ctx)) if sp.request else None
    if frame.in_foreach:
        failure = StepFailed("InterruptInForeach", f"interrupt step {path} cannot run inside a foreach body "
                             "or a parallel branch")
        return run.fail(frame, sp, path, failure, kind="interrupt", input=request, attempt=1, started=started)
    decision = run.decision
    if decision is None or decision[0] != path:
        entry = run.entry(path, "interrupt", 1, request, None, None, [], None, None, started)
        run.pause(entry, Interrupt(ctx.idempotency_key, path, sp.interrupt or "", request,
                                   list(sp.routes), sp.resume_schema))
    assert decision is not None
    run.decision = None
    _, outcome, payload = decision
    try:
        state, changes = run.stage(frame, sp.save, payload)
    except StepFailed as failure:
        return run.fail(frame, sp, path, failure, kind="interrupt", input=request, attempt=1, started=started)
    return Transition(run.entry(path, "interrupt", 1, request, outcome, payload, changes, sp.routes[outcome],
                                None, started), state)


async def run_end(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    path = frame.prefix + sp.id
    started = now()
    return Transition(run.entry(path, "end", 1, None, sp.end, None, [], None, None, started), end=sp.end)


EXECUTORS: dict[StepKind, Executor] = {
    "call": run_call,
    "workflow": run_subworkflow,
    "condition": run_condition,
    "foreach": run_foreach,
    "parallel": run_parallel,
    "interrupt": run_interrupt,
    "end": run_end,
}
