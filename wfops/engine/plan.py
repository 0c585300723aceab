"""A Workflow model compiled once into what the engine needs per step: parsed paths
as closures, routing tables, save targets and the state reducers."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from wfops.engine.reducers import REDUCERS, Reducer
from wfops.engine.values import Getter, Predicate, compile_condition, compile_value
from wfops.model.kinds import StepKind
from wfops.model.paths import parse_save_target
from wfops.model.workflow import (
    CallStep,
    ConditionStep,
    EndStep,
    ForeachStep,
    InterruptStep,
    ParallelStep,
    Step,
    SubworkflowStep,
    Workflow,
)


@dataclass(frozen=True, slots=True)
class SaveTarget:
    source: str | None  # output field to take, or None for the whole value
    field: str
    keys: tuple[str, ...]
    path: str  # "state.f.k", as recorded in state_changes


def compile_save(save: str | dict[str, str] | None) -> tuple[SaveTarget, ...]:
    if save is None:
        return ()
    if isinstance(save, str):
        name, keys = parse_save_target(save)
        return (SaveTarget(None, name, keys, save),)
    targets = []
    for source, target in save.items():
        name, keys = parse_save_target(target)
        targets.append(SaveTarget(source, name, keys, target))
    return tuple(targets)


@dataclass(slots=True)
class StepPlan:
    id: str
    kind: StepKind
    routes: dict[str, str] = field(default_factory=dict)
    with_: Getter | None = None
    save: tuple[SaveTarget, ...] = ()
    uses: str | None = None
    workflow: str | None = None
    attempts: int = 1
    backoff: float = 0.0
    timeout: float | None = None
    catch_next: str | None = None
    catch_save: tuple[SaveTarget, ...] = ()
    condition: Predicate | None = None
    condition_value: Getter | None = None
    foreach: Getter | None = None
    parallel: bool = False
    concurrency: int | None = None
    on_item_error: str = "fail"
    errors: tuple[SaveTarget, ...] = ()
    save_each: tuple[SaveTarget, ...] = ()
    branches: dict[str, Plan] = field(default_factory=dict)  # a parallel step's, by name
    on_branch_error: str = "fail"
    request: Getter | None = None
    resume_schema: dict[str, Any] | None = None
    interrupt: str | None = None
    end: str | None = None


@dataclass(slots=True)
class Plan:
    name: str
    start: str
    steps: dict[str, StepPlan]
    reducers: dict[str, Reducer]
    initial_state: dict[str, Any]
    input_schema: dict[str, Any] | None
    output: Getter | None
    output_schema: dict[str, Any] | None
    state_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # fields whose writes are checked
    list_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # the same, minus list-size keywords
    timeout: float | None = None  # seconds for the whole run (when this is the run's workflow)

    def fresh_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.initial_state) if self.initial_state else {}


def _common(plan: StepPlan,
            step: CallStep | SubworkflowStep | ConditionStep | ForeachStep | ParallelStep | InterruptStep) -> None:
    plan.routes = step.routes()
    retry = getattr(step, "retry", None)
    if retry is not None:
        plan.attempts, plan.backoff = retry.attempts, retry.backoff
    plan.timeout = getattr(step, "timeout", None)
    catch = getattr(step, "catch", None)
    if catch is not None:
        plan.catch_next = catch.next
        plan.catch_save = compile_save(catch.save)


def compile_step(step: Step) -> StepPlan:
    if isinstance(step, CallStep):
        plan = StepPlan(step.id, step.kind, uses=step.uses, with_=compile_value(step.with_),
                        save=compile_save(step.save))
    elif isinstance(step, SubworkflowStep):
        plan = StepPlan(step.id, step.kind, workflow=step.workflow, with_=compile_value(step.with_),
                        save=compile_save(step.save))
    elif isinstance(step, ConditionStep):
        plan = StepPlan(step.id, step.kind, condition=compile_condition(step.if_),
                        condition_value=compile_value(step.if_))
    elif isinstance(step, ForeachStep):
        plan = StepPlan(step.id, step.kind, uses=step.uses, workflow=step.workflow,
                        with_=compile_value(step.with_), save=compile_save(step.save),
                        foreach=compile_value(step.foreach), parallel=step.mode == "parallel",
                        concurrency=step.concurrency, on_item_error=step.on_item_error,
                        errors=compile_save(step.errors), save_each=compile_save(step.save_each))
    elif isinstance(step, ParallelStep):
        plan = StepPlan(step.id, step.kind, on_branch_error=step.on_branch_error, errors=compile_save(step.errors))
    elif isinstance(step, InterruptStep):
        plan = StepPlan(step.id, step.kind, interrupt=step.interrupt, request=compile_value(step.request),
                        resume_schema=step.resume_schema, save=compile_save(step.save))
    elif isinstance(step, EndStep):
        return StepPlan(step.id, step.kind, end=step.end)
    else:  # pragma: no cover - the model's union is closed
        raise TypeError(f"unknown step type {type(step).__name__}")
    _common(plan, step)
    return plan


def _compile_steps(workflow: Workflow, steps: list[Step]) -> dict[str, StepPlan]:
    plans = {step.id: compile_step(step) for step in steps}
    for step in steps:
        if isinstance(step, ParallelStep):
            plans[step.id].branches = {name: _branch_plan(workflow, branch) for name, branch in step.parallel.items()}
    return plans


def _branch_plan(workflow: Workflow, steps: list[Step]) -> Plan:
    """A parallel branch runs as a frame of its own: the workflow's state fields, its own steps."""
    whole = compile_workflow(workflow, steps_only=True)
    whole.start, whole.steps = steps[0].id, _compile_steps(workflow, steps)
    return whole


def compile_workflow(workflow: Workflow, *, steps_only: bool = False) -> Plan:
    initial = {name: f.json_schema()["default"] for name, f in workflow.state.items()
               if "default" in f.json_schema()}
    return Plan(
        name=workflow.name,
        start=workflow.start_step,
        steps={} if steps_only else _compile_steps(workflow, workflow.steps),
        reducers={name: REDUCERS[f.reducer] for name, f in workflow.state.items()},
        initial_state=initial,
        input_schema=None if steps_only else workflow.input,
        output=compile_value(workflow.output) if workflow.output is not None and not steps_only else None,
        output_schema=None if steps_only else workflow.output_schema,
        state_schemas=(schemas := {name: schema for name, f in workflow.state.items()
                                   if _constrains(schema := f.json_schema())}),
        list_schemas={name: {k: v for k, v in schema.items() if k not in _LIST_SIZE}
                      for name, schema in schemas.items()},
        timeout=None if steps_only else workflow.timeout,
    )


# Keywords about the whole list, which a check of only the newly added items cannot judge.
_LIST_SIZE = frozenset({"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
                        "prefixItems", "unevaluatedItems"})


_ANNOTATIONS = frozenset({"default", "description", "title", "examples", "$comment", "deprecated"})


def _constrains(schema: dict[str, Any]) -> bool:
    """Whether a state field's schema can reject a value (`{}` or annotations alone cannot)."""
    return any(key not in _ANNOTATIONS for key in schema)
