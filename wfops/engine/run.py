"""One run being driven: numbering, redaction and committing of trace entries, capability
calls with retries and timeouts, and the loop that walks a frame's steps.

The step kinds (`steps`, `foreach`, `parallel`) are written on top of this module; the loop
reaches them through its driver's `executors` table, so this module imports none of them."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from wfops.engine.errors import StepFailed, failure_of
from wfops.engine.frame import Frame, new_frame
from wfops.engine.plan import (
    ONE_ATTEMPT,
    CatchPlan,
    Plan,
    RetryPolicy,
    SaveTarget,
    StepPlan,
    retry_policy,
)
from wfops.engine.reducers import REDUCERS, ReducerError, apply_write
from wfops.engine.types import (
    CapabilityResolver,
    CheckpointSink,
    Interrupt,
    RunSnapshot,
    StepCache,
    TraceEntry,
)
from wfops.engine.values import Scope
from wfops.errors import RunStopped, SourceLost, UnstorableValue
from wfops.model.kinds import StepKind
from wfops.model.rules import NOT_RETRYABLE, error_matches
from wfops.redact import Redactor
from wfops.schemacheck import first_error, with_defaults
from wfops.sources.base import CallResult, Capability, StepContext, step_context

REPLACE = REDUCERS["replace"]
APPEND = REDUCERS["append"]
LIST_REDUCERS = (APPEND, REDUCERS["extend"], REDUCERS["union"])


_SECOND: tuple[int, str] = (-1, "")  # (the second, its formatted date part): swapped whole, for threads
_time_ns = time.time_ns


def now() -> str:
    """ISO-8601 UTC with microseconds; the date part is formatted once per second (hot path)."""
    global _SECOND
    second, nanos = divmod(_time_ns(), 1_000_000_000)
    known = _SECOND
    if second != known[0]:
        known = _SECOND = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return known[1] + str(1_000_000 + nanos // 1000)[1:] + "Z"


class Paused(Exception):  # noqa: N818 - control flow, not an error
    """Unwinds every frame once an interrupt has been committed."""


@dataclass(slots=True)
class Transition:
    """What a step did: its entry (state_changes filled in) and where the frame goes next."""

    entry: TraceEntry
    state: dict[str, Any] | None = None  # the frame's state after the step's writes
    end: str | None = None  # the frame's outcome when the step ends it
    failed: dict[str, Any] | None = None  # the frame's error when the step fails it


class Driver(Protocol):
    """What a run needs of the engine that drives it (`wfops.engine.engine.Engine`)."""

    resolver: CapabilityResolver
    sink: CheckpointSink
    deployment: str | None
    secrets: Mapping[str, str]
    artifacts: Mapping[str, str]
    redactor: Redactor
    max_steps: int
    executors: Mapping[StepKind, Executor]  # one per step kind (`wfops.engine.steps.EXECUTORS`)
    cache: StepCache | None  # where cached call steps' successes are kept; None: no step cache

    def plan(self, name: str) -> Plan: ...

    def capability(self, ref: str) -> Capability: ...


class RunContext:
    def __init__(self, engine: Driver, run_id: str, workflow: str, input: Any, seq: int = 0,
                 decision: tuple[str, str, Any] | None = None, resumed: RunSnapshot | None = None,
                 resumed_trace: list[TraceEntry] | None = None) -> None:
        self.engine = engine
        self.run_id = run_id
        self.workflow = workflow
        self.input = input
        self.seq = seq
        self.decision = decision  # (interrupt step path, outcome, payload) to apply on resume
        self.redactor: Redactor = engine.redactor
        self.secrets: Mapping[str, str] = engine.secrets
        self.last: RunSnapshot | None = None
        # Failed attempts already in the trace, per step path: a resumed or redriven step goes
        # on numbering its attempts after them (its idempotency key stays the same).
        self.prior: dict[str, int] = prior_attempts(resumed_trace) if resumed_trace else {}
        # Seconds the run was driven before this drive (the workflow `timeout` budget);
        # kept in the cursor only when the workflow has a timeout.
        self.timeout: float | None = None
        self.elapsed_before = 0.0
        self.started = time.monotonic()
        # A resumed run keeps what it was started with unless the caller says otherwise.
        self.artifact = engine.artifacts.get(workflow) or (resumed.artifact if resumed else "")
        self.deployment = engine.deployment or (resumed.deployment if resumed else None)
        # Asked of the sink once, not before every step: a sink that shows no progress has none.
        self._notice: Callable[[str, str, int | None, int], None] | None = getattr(engine.sink, "step_started", None)
        # Per capability ref, what the step cache needs of it (`cache.policy`): asked once.
        self.cache_policies: dict[str, Any] = {}
        # Per capability ref, the retry policy and timeout a step that gives none gets (its
        # contract's defaults): asked of the capability once, not before every call.
        self._defaults: dict[str, tuple[RetryPolicy, float | None]] = {}
        # Per capability ref, how it is called (`_caller_of`): found once, not before every call.
        self._callers: dict[str, Callable[[Any, StepContext], Awaitable[CallResult]]] = {}

    # -- snapshots and commits -------------------------------------------------------
    def snapshot(self, status: str = "running", **fields: Any) -> RunSnapshot:
        return RunSnapshot(self.run_id, self.workflow, self.artifact, self.deployment, status,  # type: ignore[arg-type]
                           self.input, **fields)

    def commit(self, entries: list[TraceEntry], snapshot: RunSnapshot | None = None) -> RunSnapshot:
        for entry in entries:
            self.seq += 1
            entry.seq = self.seq
        run = snapshot or self.snapshot()
        run.cursor = {"seq": self.seq, "step": entries[-1].step if entries else None}
        if self.timeout is not None:
            run.cursor["elapsed"] = round(self.elapsed(), 3)
        try:
            self.engine.sink.commit(run, entries)
        except UnstorableValue:
            self.seq -= len(entries)  # nothing was written: the numbers are free again
            raise
        self.last = run
        return run

    def step_started(self, path: str, kind: str, total: int | None = None, done: int = 0) -> None:
        """Tell a sink that shows progress (one whose `step_started` attribute is a callable
        `(path, kind, total, done)`, not None) that a step begins; `total`/`done`: a foreach's items. Not durable: a
        progress display only, nothing is stored."""
        if self._notice is not None:
            self._notice(path, kind, total, done)

    def elapsed(self) -> float:
        """Seconds this run has been driven, over all its drives (waits at interrupts excluded)."""
        return self.elapsed_before + time.monotonic() - self.started

    def unstorable(self, entry: TraceEntry, exc: UnstorableValue) -> TraceEntry:
        """The step's entry once its result could not be stored: a failure that says why,
        without the values (so it can be stored), and no state change. Values are checked
        where they enter; this keeps a value that slipped through from leaving the run
        `running` for ever (a resume would only meet it again)."""
        error = {"type": "UnstorableValue", "message": self.redactor.text(exc.message), "step": entry.step}
        return TraceEntry(0, entry.step, entry.kind, entry.attempt, None, None, None, [], None, error,
                          entry.started_at, entry.ended_at)

    def entry(self, step: str, kind: str, attempt: int, input: Any, outcome: str | None, output: Any,
              changes: list[dict[str, Any]], next: str | None, error: dict[str, Any] | None,
              started: str, extra: dict[str, Any] | None = None) -> TraceEntry:
        if self.redactor.active:
            red = self.redactor.redact
            input, output, changes, error = red(input), red(output), red(changes), red(error)
            extra = red(extra) if extra is not None else None
        return TraceEntry(0, step, kind, attempt, input, outcome, output, changes, next, error, started, now(),
                          extra)

    def pause(self, entry: TraceEntry, interrupt: Interrupt) -> None:
        interrupt.request = self.redactor.redact(interrupt.request)
        self.commit([entry], self.snapshot("interrupted", interrupt=interrupt))
        raise Paused

    # -- step helpers ----------------------------------------------------------------
    def context(self, frame: Frame, path: str, attempt: int, key: str) -> StepContext:
        return step_context(self.run_id, frame.plan.name, self.deployment, path, attempt, f"{self.run_id}:{key}")

    def scope(self, frame: Frame, ctx: StepContext, item: Any = None, index: int | None = None) -> Scope:
        return Scope(frame.input, frame.state, ctx, self.secrets, item, index)

    def capability(self, ref: str) -> Capability:
        return self.engine.capability(ref)

    async def call(self, sp: StepPlan, payload: Any, ctx: StepContext, started: str | None = None
                   ) -> tuple[str, Any, int, dict[str, Any] | None]:
        """Call `sp.uses` with retries and a per-attempt timeout; (outcome, output, attempts, extra).
        `started`: when the first attempt started, if the caller has just read the clock."""
        ref = sp.uses or ""
        defaults = self._defaults.get(ref)
        if defaults is None:  # an unknown ref fails here, once, not on every attempt
            defaults = self._defaults[ref] = self._defaults_of(ref)
        # The step's own `retry`/`timeout`, else its capability's defaults.
        policy = sp.retry if sp.retry is not None else defaults[0]
        timeout = sp.timeout if sp.timeout is not None else defaults[1]
        caller = self._callers.get(ref)
        path = ctx.step
        first = attempt = self.prior.pop(path, 0) + 1 if self.prior else 1
        if attempt != ctx.attempt:
            ctx = step_context(ctx.run_id, ctx.workflow, ctx.deployment, path, attempt, ctx.idempotency_key)
        while True:
            started = started or now()
            lost: SourceLost | None = None
            try:
                if caller is None:  # an unknown ref fails here, as the call's own failure
                    caller = self._callers[ref] = self._caller_of(ref)
                coro = caller(payload, ctx)
                # The resolver checks the call against the capability's contract.
                result = await (asyncio.wait_for(coro, timeout) if timeout else coro)
                return result.outcome, result.output, attempt, result.extra
            except TimeoutError:
                failure = StepFailed("Timeout", f"{ref} timed out after {timeout:g}s")
            except Exception as exc:  # any capability failure is a step failure
                failure = failure_of(exc)
                lost = exc if isinstance(exc, SourceLost) else None
            except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - sys.exit() in a node must not end wfops (exit 3 reads "interrupted")
                failure = _foreign_failure(exc)
            if attempt >= first + policy.attempts - 1 or not retryable(failure.type, policy.on):
                if lost is not None and catch_for(sp, failure) is None and sp.on_item_error in (None, "fail"):
                    # The source's server died, not the call's logic: keep the run resumable
                    # (unfinished at its last committed step) rather than failing it for good.
                    raise RunStopped(self.redactor.text(f"run {self.run_id} stopped at step {ctx.step}: {lost.message}"),
                                     run_id=self.run_id,
                                     hint=f"`wfops resume {self.run_id}` continues the run from its last "
                                          "committed step")
                failure.attempt = attempt
                raise failure
            # The failed attempt stays in the trace with its error and the sleep drawn before the
            # next one (`output.delay`, seconds), so the delays can be read back, not timed.
            delay = retry_delay(policy, attempt)
            self.commit([self.entry(path, "retry", attempt, payload, None, {"delay": delay}, [], None,
                                    failure.as_error(path), started)])
            await asyncio.sleep(delay)
            attempt += 1
            started = None
            ctx = step_context(ctx.run_id, ctx.workflow, ctx.deployment, ctx.step, attempt, ctx.idempotency_key)

    def _caller_of(self, ref: str) -> Callable[[Any, StepContext], Awaitable[CallResult]]:
        """How `ref` is called in this run: the resolver's `caller(ref)` when it has one (the
        capability found once for all the run's calls of it), else its `call` each time."""
        bind = getattr(self.engine.resolver, "caller", None)
        if bind is not None:
            bound: Callable[[Any, StepContext], Awaitable[CallResult]] = bind(ref)
            return bound
        call = self.engine.resolver.call
        return lambda payload, ctx: call(ref, payload, ctx)

    def _defaults_of(self, ref: str) -> tuple[RetryPolicy, float | None]:
        """The retry policy and timeout a call of `ref` gets when its step gives none."""
        defaults = self.capability(ref).defaults
        retry = defaults.get("retry") if defaults else None
        return retry_policy(retry) if retry else ONE_ATTEMPT, defaults.get("timeout") if defaults else None

    def stage(self, frame: Frame, targets: tuple[SaveTarget, ...], value: Any, *, listwise: bool = False
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The frame's state with the writes applied (a new dict) and the writes as recorded."""
        if not targets or value is None:
            return frame.state, []
        plan = frame.plan
        state = frame.state.copy()
        reducers = plan.reducers
        schemas, types = plan.state_schemas, plan.state_types
        check = False  # whether a write needs `_check_writes` (one of a bare `type` it has does not)
        changes: list[dict[str, Any]] = []
        for target in targets:
            source = target.source
            if source is None:
                written = value
            elif listwise:
                written = [v.get(source) if isinstance(v, dict) else None for v in value]
            elif isinstance(value, dict) and source in value:
                written = value[source]
            else:
                # An optional field the output left out (a required one failed the call's contract
                # check, `InvalidOutput`): the state field stays as it is.
                continue
            field = target.field
            reducer = reducers.get(field)
            if not target.keys and (reducer is None or reducer is REPLACE):
                state[field] = written  # the common case, without a call
                if not check and field in schemas and type(written) not in types.get(field, ()):
                    check = True
            else:
                try:
                    apply_write(state, reducers, field, target.keys, written)
                except ReducerError as exc:
                    raise StepFailed("SaveError", f"saving to {target.path}: {exc}") from None
                check = check or field in schemas
            changes.append({"path": target.path, "value": written})
        if check:
            self._check_writes(plan, state, targets, changes)
        return state, changes

    def _check_writes(self, plan: Plan, state: dict[str, Any], targets: tuple[SaveTarget, ...],
                      changes: list[dict[str, Any]]) -> None:
        """State is typed: a write that takes a field off its schema fails the step.

        A list reducer's field checks only the items this write added (against the schema
        without its list-size keywords), so a long loop does not re-check the whole list
        on every write; other fields check their new value."""
        written: dict[str, Any] | None = None
        for target in targets:
            schema = plan.state_schemas.get(target.field)
            if schema is None:
                continue
            if written is None:
                written = {c["path"]: c["value"] for c in changes}
            if target.path not in written:
                continue
            if not target.keys and plan.reducers.get(target.field) in LIST_REDUCERS:
                value = written[target.path]
                added = [value] if plan.reducers[target.field] is APPEND or not isinstance(value, list) else value
                self._check_state(target.field, plan.list_schemas[target.field], added)
            else:
                value = state.get(target.field)
                if type(value) in plan.state_types.get(target.field, ()):
                    continue  # a bare `type` the value has: what the validator would conclude
                self._check_state(target.field, schema, value)

    @staticmethod
    def _check_state(name: str, schema: dict[str, Any], value: Any) -> None:
        """State is typed: a write that leaves a field off its schema fails the step (null is
        "no value" and passes, as for an unset field)."""
        if value is None:
            return
        problem = first_error(schema, value)
        if problem is not None:
            raise StepFailed("SaveError", f"state.{name} does not match its schema: {problem}")

    def fail(self, frame: Frame, sp: StepPlan, path: str, failure: StepFailed, *, kind: str,
             input: Any, attempt: int, started: str, error: dict[str, Any] | None = None) -> Transition:
        """Route a failed step through `catch`, or fail the frame."""
        error = error or failure.as_error(path)
        catch = catch_for(sp, failure)
        if catch is not None:
            try:
                state, changes = self.stage(frame, catch.save, dict(error))
            except StepFailed as bad:
                error = bad.as_error(path)
            else:
                entry = self.entry(path, kind, attempt, input, None, None, changes, catch.next, error, started)
                return Transition(entry, state)
        return Transition(self.entry(path, kind, attempt, input, None, None, [], None, error, started),
                          failed=self.redactor.redact(error))

    def route(self, sp: StepPlan, outcome: str, path: str) -> str:
        target = sp.routes.get(outcome)
        if target is None:
            raise StepFailed("UnroutedOutcome", f"step {path} ended in outcome {outcome!r}, which no route "
                             f"handles (routed: {', '.join(sp.routes) or 'none'})", catchable=False)
        return target

    # -- frames ----------------------------------------------------------------------
    async def run_frame(self, frame: Frame, *, top: bool = False) -> None:
        executors, max_steps = self.engine.executors, self.engine.max_steps
        if frame.done and top:
            self.commit([], self.final(frame))
        while not frame.done:
            if self.seq >= max_steps:
                frame.error = {"type": "StepLimit", "message": f"the run reached {self.engine.max_steps} steps "
                               "without finishing; a routing loop?", "step": frame.prefix + frame.current}
                if top:
                    self.commit([], self.final(frame))
                return
            sp = frame.plan.steps.get(frame.current)
            if sp is None:
                frame.error = {"type": "UnknownStep", "message": f"no step {frame.current!r} in workflow "
                               f"{frame.plan.name!r}", "step": frame.prefix + frame.current}
                if top:
                    self.commit([], self.final(frame))
                return
            pending = frame.pending
            if pending:
                frame.pending = []
            if self._notice is not None:
                self._notice(frame.prefix + sp.id, sp.kind, None, 0)
            move = await executors[sp.kind](self, frame, sp, pending)
            entry = move.entry
            visits = frame.visits.get(sp.id)
            before = (frame.state, visits, frame.current)
            if move.state is not None:
                frame.state = move.state
                if frame.log is not None:
                    frame.log.extend(entry.state_changes)
            if move.failed is not None:
                frame.error = move.failed
            elif move.end is not None:
                frame.outcome = move.end
            else:
                frame.visits[sp.id] = (visits or 0) + 1
                if entry.next == "end":
                    frame.outcome = "ok"
                else:
                    frame.current = entry.next or ""
            try:
                self.commit([entry], self.final(frame) if top and frame.done else None)
            except UnstorableValue as exc:
                entry = self.unstorable(entry, exc)
                frame.state, visits, frame.current = before
                if visits is None:
                    frame.visits.pop(sp.id, None)
                else:
                    frame.visits[sp.id] = visits
                frame.outcome, frame.error = None, entry.error
                self.commit([entry], self.final(frame) if top else None)

    def output_of(self, frame: Frame) -> Any:
        """The frame's projected output, checked against its `output_schema`."""
        plan = frame.plan
        if plan.output is None:
            return None
        output = plan.output(Scope(frame.input, frame.state, None, self.secrets))
        problem = first_error(plan.output_schema, output)
        if problem is not None:
            raise StepFailed("InvalidOutput", f"workflow {plan.name} output does not match output_schema: "
                             f"{problem}")
        return output

    def final(self, frame: Frame) -> RunSnapshot:
        if frame.error is not None:
            return self.snapshot("failed", error=frame.error)
        try:
            output = self.output_of(frame)
        except StepFailed as failure:
            return self.snapshot("failed", error=self.redactor.redact(failure.as_error("output")))
        return self.snapshot("completed", outcome=frame.outcome, output=self.redactor.redact(output))

    async def run_child(self, workflow: str, input: Any, *, prefix: str, key_prefix: str, in_foreach: bool,
                        trace: list[TraceEntry] | None, timeout: float | None) -> tuple[str, Any]:
        """Run (or continue) a child workflow; its (outcome, output), or StepFailed."""
        plan = self.engine.plan(workflow)
        input = with_defaults(plan.input_schema, input)
        problem = first_error(plan.input_schema, input)
        if problem is not None:
            raise StepFailed("InvalidInput", f"input of workflow {workflow}: {problem}")
        child = new_frame(plan, input, prefix=prefix, key_prefix=key_prefix, in_foreach=in_foreach,
                          trace=trace)
        try:
            if timeout:
                await asyncio.wait_for(self.run_frame(child), timeout)
            else:
                await self.run_frame(child)
        except TimeoutError:
            raise StepFailed("Timeout", f"workflow {workflow} timed out after {timeout:g}s") from None
        if child.error is not None:
            failure = StepFailed(str(child.error.get("type")), str(child.error.get("message")))
            failure.inner_step = child.error.get("step")
            raise failure
        return child.outcome or "ok", self.output_of(child)


def retryable(error_type: str, on: tuple[str, ...] | None) -> bool:
    """Whether another attempt may follow a failure of `error_type` under `retry.on`."""
    return error_type not in NOT_RETRYABLE and error_matches(error_type, on)


def retry_delay(policy: RetryPolicy, failed: int) -> float:
    """The sleep after failed attempt `failed`: `backoff * 2**(n-1)`, capped at `max_delay`,
    and with full jitter drawn uniformly from [0, that]."""
    delay = policy.backoff * 2.0 ** (failed - 1)
    if policy.max_delay is not None:
        delay = min(delay, policy.max_delay)
    if policy.jitter:
        delay = random.uniform(0.0, delay)  # noqa: S311 - spreading retries, not a secret
    return delay


def catch_for(sp: StepPlan, failure: StepFailed) -> CatchPlan | None:
    """The first `catch` entry that takes this failure (a workflow bug is never caught)."""
    if not failure.catchable:
        return None
    return next((c for c in sp.catches if error_matches(failure.type, c.errors)), None)


def prior_attempts(trace: list[TraceEntry]) -> dict[str, int]:
    """Per step path, the last attempt number of the failures that end its trace (none once
    the step has succeeded or been caught)."""
    prior: dict[str, int] = {}
    for entry in trace:
        if entry.error is not None and entry.next is None:
            prior[entry.step] = max(prior.get(entry.step, 0), entry.attempt)
        else:
            prior.pop(entry.step, None)
    return prior


def _foreign_failure(exc: BaseException) -> StepFailed:
    if isinstance(exc, SystemExit):
        return StepFailed("SystemExit", f"the capability called sys.exit({exc.code!r}); return or raise instead")
    return failure_of(exc)


Executor = Callable[[RunContext, Frame, StepPlan, list[TraceEntry]], Awaitable[Transition]]
__all__ = ["Driver", "Executor", "Paused", "Plan", "RunContext", "Transition", "now"]
