"""The engine: starts runs and resumes interrupted or crashed ones.

It knows nothing of YAML, SQLite or MCP: it takes workflows (their normalized forms, plain
JSON data, or models), a capability resolver and a checkpoint sink, and commits every step through the sink before the
next one starts. See docs/engine.md for the execution semantics.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from wfops.engine.errors import InvalidInput, StepFailed
from wfops.engine.frame import Frame, new_frame
from wfops.engine.plan import Plan, StepPlan, WorkflowSource, compile_workflow
from wfops.engine.run import Executor, Paused, RunContext
from wfops.engine.steps import EXECUTORS
from wfops.engine.types import (
    CancelSignal,
    CapabilityResolver,
    CheckpointSink,
    RunSnapshot,
    StepCache,
    TraceEntry,
)
from wfops.errors import RefusedError
from wfops.model.kinds import StepKind
from wfops.redact import Redactor
from wfops.schemacheck import first_error, with_defaults
from wfops.sources.base import Capability

#: A run that commits this many trace entries fails with `StepLimit`: a routing loop
#: must not run (and grow the store) forever. Runs that need more pass `max_steps`.
DEFAULT_MAX_STEPS = 100_000

#: Seconds between two looks at the cancel signal while a run is driven.
CANCEL_POLL = 0.2


class Engine:
    def __init__(self, workflows: Mapping[str, WorkflowSource], resolver: CapabilityResolver, sink: CheckpointSink, *,
                 deployment: str | None = None, secrets: Mapping[str, str] | None = None,
                 artifacts: Mapping[str, str] | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                 cancel: CancelSignal | None = None, cache: StepCache | None = None) -> None:
        self.workflows = workflows
        self.resolver = resolver
        self.sink = sink
        self.deployment = deployment
        self.secrets: Mapping[str, str] = dict(secrets or {})
        self.artifacts: Mapping[str, str] = dict(artifacts or {})
        self.redactor = Redactor(self.secrets.values())
        self.max_steps = max_steps
        self.cancel = cancel
        self.cache = cache
        self.executors: Mapping[StepKind, Executor] = EXECUTORS
        self._plans: dict[str, Plan] = {}
        self._caps: dict[str, Capability] = {}

    def plan(self, name: str) -> Plan:
        """The compiled plan of a workflow (compiled once); StepFailed for an unknown name."""
        plan = self._plans.get(name)
        if plan is None:
            workflow = self.workflows.get(name)
            if workflow is None:
                raise StepFailed("UnknownWorkflow", f"no workflow named {name!r}")
            try:
                plan = self._plans[name] = compile_workflow(workflow)
            except ValueError as exc:  # e.g. a malformed path the static checks would have reported
                raise StepFailed("InvalidWorkflow", f"workflow {name}: {exc}") from None
        return plan

    def capability(self, ref: str) -> Capability:
        cap = self._caps.get(ref)
        if cap is None:
            try:
                cap = self._caps[ref] = self.resolver.capability(ref)
            except Exception as exc:
                raise StepFailed("UnknownCapability", getattr(exc, "message", None) or str(exc)) from None
        return cap

    async def start(self, workflow: str, input: Any, *, run_id: str | None = None) -> RunSnapshot:
        try:
            plan = self.plan(workflow)
        except StepFailed as exc:
            raise RefusedError(exc.message, hint="check the deployment's `workflow:`") from None
        input = with_defaults(plan.input_schema, input)
        problem = first_error(plan.input_schema, input)
        if problem is not None:
            raise InvalidInput(self.redactor.text(f"invalid input for workflow {workflow}: {problem}"),
                               hint="fix the deployment `input:` or the values given with --input")
        run = RunContext(self, run_id or secrets.token_hex(16), workflow, input)
        run.commit([])
        return await self._drive(run, new_frame(plan, input))

    async def resume(self, snapshot: RunSnapshot, trace: Sequence[TraceEntry], *,
                     outcome: str | None = None, payload: Any = None) -> RunSnapshot:
        if snapshot.status == "completed":
            raise RefusedError(f"run {snapshot.run_id} is {snapshot.status}; nothing to resume")
        try:
            plan = self.plan(snapshot.workflow)
        except StepFailed as exc:
            raise RefusedError(f"cannot resume run {snapshot.run_id}: {exc.message}") from None
        entries = sorted(trace, key=lambda e: e.seq)
        last_seq = max((e.seq for e in entries), default=0)
        if int(snapshot.cursor.get("seq", 0) or 0) > last_seq:
            raise RefusedError(f"run {snapshot.run_id}: the trace ends at seq {last_seq} but the checkpoint "
                               f"is at {snapshot.cursor.get('seq')}; the trace given is incomplete")
        decision = None
        if snapshot.status == "interrupted":
            decision = self._decision(snapshot, entries, outcome, payload)
        elif outcome is not None or payload is not None:
            raise RefusedError(f"run {snapshot.run_id} is not waiting at an interrupt; "
                               "resume it without --outcome/--payload")
        run = RunContext(self, snapshot.run_id, snapshot.workflow, snapshot.input, last_seq, decision, snapshot,
                         entries)
        # A redrive after the run's own timeout starts a fresh budget; otherwise the clock goes on.
        timed_out = snapshot.status == "failed" and (snapshot.error or {}).get("step") is None \
            and (snapshot.error or {}).get("type") == "Timeout"
        if not timed_out:
            run.elapsed_before = float(snapshot.cursor.get("elapsed", 0.0) or 0.0)
        return await self._drive(run, new_frame(plan, snapshot.input, trace=entries))

    def _decision(self, snapshot: RunSnapshot, entries: list[TraceEntry], outcome: str | None,
                  payload: Any) -> tuple[str, str, Any]:
        """Check the resume outcome and payload against the open interrupt, before anything runs."""
        path = snapshot.interrupt.step if snapshot.interrupt else next(
            (e.step for e in reversed(entries) if e.kind == "interrupt" and e.outcome is None), None)
        sp = self._step_at(snapshot.workflow, path) if path else None
        if not path or sp is None or sp.kind != "interrupt":
            raise RefusedError(f"run {snapshot.run_id} is interrupted but its open interrupt cannot be found")
        choices = ", ".join(sp.routes)
        if outcome is None:
            raise RefusedError(f"run {snapshot.run_id} waits at {path}: give an outcome, one of {choices}")
        if outcome not in sp.routes:
            raise RefusedError(f"outcome {outcome!r} is not one the interrupt at {path} accepts; use one of "
                               f"{choices}")
        problem = first_error(sp.resume_schema, payload)
        if problem is not None:
            raise InvalidInput(self.redactor.text(f"payload does not match the resume_schema of {path}: {problem}"))
        self._check_save(snapshot, entries, path, payload)
        return path, outcome, payload

    def _check_save(self, snapshot: RunSnapshot, entries: list[TraceEntry], path: str, payload: Any) -> None:
        """Refuse a payload the interrupt's `save` would reject (a state schema, a reducer), before
        the run is touched: accepted, it would only fail the run; refused, the run still waits."""
        plan, sp = self._located(snapshot.workflow, path)
        if sp is None or not sp.save:
            return
        prefix = path[:path.rfind("/") + 1]
        frame = new_frame(plan, snapshot.input, prefix=prefix, trace=[e for e in entries if e.step.startswith(prefix)])
        try:
            RunContext(self, snapshot.run_id, snapshot.workflow, snapshot.input).stage(frame, sp.save, payload)
        except StepFailed as failure:
            raise InvalidInput(self.redactor.text(f"payload cannot be saved by the interrupt at {path}: "
                                                  f"{failure.message}"),
                               hint="the run still waits; resume it with a payload its state accepts") from None

    def _step_at(self, workflow: str, path: str) -> StepPlan | None:
        """The step a trace path names, following subworkflow steps (`outer/inner`)."""
        return self._located(workflow, path)[1]

    def _located(self, workflow: str, path: str) -> tuple[Plan, StepPlan | None]:
        """The step a trace path names and the plan it belongs to."""
        plan, sp = self.plan(workflow), None
        for part in path.split("/"):
            if sp is not None:
                if sp.kind != "workflow" or not sp.workflow:
                    return plan, None
                plan = self.plan(sp.workflow)
            sp = plan.steps.get(part)
            if sp is None:
                return plan, None
        return plan, sp

    async def _drive(self, run: RunContext, frame: Frame) -> RunSnapshot:
        """Drive the top frame; a cancel request or the workflow's `timeout` stops it.

        Both are noticed by a watcher task that cancels the driving task: the step in flight
        is cancelled where it awaits (a sync node's thread runs on but is no longer waited
        for), and nothing after the last committed step is recorded but the stop itself."""
        run.timeout = frame.plan.timeout
        run.started = time.monotonic()
        task = asyncio.current_task()
        watcher = None
        if task is not None and (self.cancel is not None or run.timeout is not None):
            watcher = asyncio.ensure_future(self._watch(run, task))
        try:
            with contextlib.suppress(Paused):
                await run.run_frame(frame, top=True)
        except asyncio.CancelledError:
            stopped = watcher.result() if watcher is not None and watcher.done() and not watcher.cancelled() else None
            if stopped is None:  # cancelled from outside (Ctrl-C, a cancelled task): record it, pass it on
                run.commit([], run.snapshot("cancelled"))
                raise
            assert task is not None
            task.uncancel()
            if stopped == "timeout":
                error = {"type": "Timeout", "message": f"workflow {frame.plan.name} timed out after "
                         f"{run.timeout:g}s", "step": None}
                run.commit([], run.snapshot("failed", error=error))
            else:
                run.commit([], run.snapshot("cancelled"))
        finally:
            if watcher is not None and not watcher.done():
                watcher.cancel()
        assert run.last is not None
        return run.last

    async def _watch(self, run: RunContext, task: asyncio.Task[Any]) -> str:
        """Wait until the run is asked to stop or runs out of time; cancel its task; say why."""
        while True:
            left = None if run.timeout is None else run.timeout - run.elapsed()
            if left is not None and left <= 0:
                reason = "timeout"
                break
            if self.cancel is not None and self.cancel.requested(run.run_id):
                reason = "cancel"
                break
            wait = CANCEL_POLL if self.cancel is not None or left is None else left
            await asyncio.sleep(wait if left is None else min(wait, left))
        task.cancel()
        return reason
