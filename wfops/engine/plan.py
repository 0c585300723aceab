"""A workflow compiled once into what the engine needs per step: parsed paths as closures,
routing tables, save targets and the state reducers, next to the steps as declared."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from wfops.compiler.artifact import load_artifact
from wfops.engine.reducers import REDUCERS, Reducer
from wfops.engine.values import Getter, Predicate, compile_condition, compile_value
from wfops.model.kinds import StepKind, catches
from wfops.model.objects import (
    ConditionStep,
    ForeachStep,
    InterruptStep,
    ParallelStep,
    Step,
    Workflow,
)
from wfops.model.paths import item_named, parse_save_target

#: What the engine plans from: a workflow's plain object or its normalized form (plain JSON
#: data, as the gate record and the store keep it).
WorkflowSource: TypeAlias = Workflow | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SaveTarget:
    source: str | None  # output field to take, or None for the whole value
    field: str
    keys: tuple[str, ...]
    path: str  # "state.f.k", as recorded in state_changes


def compile_save(save: str | dict[str, str] | None) -> tuple[SaveTarget, ...]:
    """The targets of a `save` (or `errors`, `save_each`, a catch's `save`). Targets are
    immutable, so steps that save alike (most steps of a long chain) share one tuple."""
    if save is None:
        return ()
    try:
        key: Any = save if isinstance(save, str) else tuple(save.items())
        targets = _SAVES.get(key)
    except TypeError:  # a value that is not text: let `_save_targets` say what is wrong
        return _save_targets(save)
    if targets is None:
        if len(_SAVES) >= _MAX_SAVES:  # long-lived processes (watch, mcp) compile new workflows
            _SAVES.clear()
        targets = _SAVES[key] = _save_targets(save)
    return targets


_SAVES: dict[Any, tuple[SaveTarget, ...]] = {}
_MAX_SAVES = 4096


def _save_targets(save: str | dict[str, str]) -> tuple[SaveTarget, ...]:
    if isinstance(save, str):
        name, keys = parse_save_target(save)
        return (SaveTarget(None, name, keys, save),)
    targets = []
    for source, target in save.items():
        name, keys = parse_save_target(target)
        targets.append(SaveTarget(source, name, keys, target))
    return tuple(targets)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a call is retried: a step's `retry`, or its capability's default."""

    attempts: int = 1
    backoff: float = 0.0
    on: tuple[str, ...] | None = None  # the error types retried (None: every retryable one)
    max_delay: float | None = None
    jitter: bool = False  # full jitter: each sleep drawn from [0, delay]


ONE_ATTEMPT = RetryPolicy()


def retry_policy(retry: Any) -> RetryPolicy:
    """The policy of a `retry` as declared (a plain object) or as a capability's default (JSON)."""
    get = retry.get if isinstance(retry, Mapping) else lambda key, default=None: getattr(retry, key, default)
    on = get("on")
    return RetryPolicy(int(get("attempts", 3)), float(get("backoff", 0.5)), tuple(on) if on else None,
                       get("max_delay"), get("jitter", "none") == "full")


@dataclass(frozen=True, slots=True)
class CatchPlan:
    """One `catch` entry: the error types it takes (None: any), where it routes, what it saves."""

    errors: tuple[str, ...] | None
    next: str
    save: tuple[SaveTarget, ...] = ()


@dataclass(slots=True)
class StepPlan:
    """One step as the engine runs it. `step` is the step as declared: every field its kind's
    declaration has, defaults filled in by that declaration, so a field added to the format
    is here without a change to this module. The rest is compiled from it once: closures for
    values and conditions, save targets, routes, the plans of parallel branches, and the
    declared values the engine reads on any kind of step (None where the kind has no such
    field)."""

    step: Step
    routes: dict[str, str]
    with_: Getter | None = None
    save: tuple[SaveTarget, ...] = ()
    errors: tuple[SaveTarget, ...] = ()
    save_each: tuple[SaveTarget, ...] = ()
    condition: Predicate | None = None
    condition_value: Getter | None = None
    foreach: Getter | None = None
    request: Getter | None = None
    branches: dict[str, Plan] = field(default_factory=dict)  # a parallel step's, by name
    uses: str | None = None
    workflow: str | None = None
    timeout: float | None = None
    concurrency: int | None = None
    on_item_error: str | None = None
    on_branch_error: str | None = None
    resume_schema: dict[str, Any] | None = None
    interrupt: str | None = None
    end: str | None = None
    retry: RetryPolicy | None = None  # None: the step gives none (its capability's default, or one attempt)
    catches: tuple[CatchPlan, ...] = ()
    when: dict[str, Predicate] = field(default_factory=dict)  # a parallel step's conditional branches
    parallel: bool = False  # a foreach whose items run side by side
    cache: Any = None  # the step's `cache:` as declared (None: it says nothing)
    # The declared step's id and kind, read several times per executed step: kept as plain
    # attributes rather than looked up through the declaration each time.
    id: str = field(init=False)
    kind: StepKind = field(init=False)

    def __post_init__(self) -> None:
        self.id = self.step.id
        self.kind = self.step.kind


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
    reducer_names: dict[str, str] = field(default_factory=dict)  # field -> its declared reducer
    # Fields whose schema is a bare `type`: the Python types a value of that JSON type has
    # (exact types: a subclass, or an integral float for "integer", takes the full check).
    state_types: dict[str, tuple[type, ...]] = field(default_factory=dict)

    def fresh_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.initial_state) if self.initial_state else {}


def compile_step(step: Step) -> StepPlan:
    """One step of a workflow (a plain object, as the plain loader or `load_artifact` builds it)."""
    declared = step.__dict__
    retry = declared.get("retry")
    plan = StepPlan(
        step, step.routes(),
        with_=compile_value(item_named(declared["with_"], declared.get("as_", "item"))) if "with_" in declared else None,
        save=compile_save(declared.get("save")), errors=compile_save(declared.get("errors")),
        save_each=compile_save(declared.get("save_each")),
        uses=declared.get("uses"), workflow=declared.get("workflow"), timeout=declared.get("timeout"),
        concurrency=declared.get("concurrency"), on_item_error=declared.get("on_item_error"),
        on_branch_error=declared.get("on_branch_error"), resume_schema=declared.get("resume_schema"),
        interrupt=declared.get("interrupt"), end=declared.get("end"),
        retry=retry_policy(retry) if retry is not None else None,
        parallel=declared.get("mode") == "parallel", cache=declared.get("cache"),
        catches=tuple(CatchPlan(tuple(c.errors) if c.errors else None, c.next, compile_save(c.save))
                      for c in catches(step)))
    if isinstance(step, ConditionStep):
        plan.condition, plan.condition_value = compile_condition(step.if_), compile_value(step.if_)
    elif isinstance(step, ForeachStep):
        plan.foreach = compile_value(step.foreach)
    elif isinstance(step, InterruptStep):
        plan.request = compile_value(step.request)
    elif isinstance(step, ParallelStep) and step.when:
        plan.when = {name: compile_condition(condition) for name, condition in step.when.items()}
    return plan


def _compile_steps(workflow: Workflow, steps: list[Step]) -> dict[str, StepPlan]:
    plans = {step.id: compile_step(step) for step in steps}
    for step in steps:
        if isinstance(step, ParallelStep):
            plans[step.id].branches = {name: _branch_plan(workflow, branch) for name, branch in step.parallel.items()}
    return plans


def _branch_plan(workflow: Workflow, steps: list[Step]) -> Plan:
    """A parallel branch runs as a frame of its own: the workflow's state fields, its own steps."""
    whole = _compile(workflow, steps_only=True)
    whole.start, whole.steps = steps[0].id, _compile_steps(workflow, steps)
    return whole


def compile_workflow(workflow: WorkflowSource) -> Plan:
    """The plan of a workflow, from its plain object or its normalized form (a record, a stored
    artifact), which is loaded first, so a stored form gets the format's defaults for any field
    it lacks. Raises ValueError for a form the format rejects."""
    if isinstance(workflow, Mapping):
        workflow = load_artifact(workflow)
    return _compile(workflow)


def _compile(workflow: Workflow, *, steps_only: bool = False) -> Plan:
    state = workflow.state
    fields = {name: spec.json_schema() for name, spec in state.items()}
    output = workflow.output
    return Plan(
        name=workflow.name,
        start=workflow.start_step,
        steps={} if steps_only else _compile_steps(workflow, workflow.steps),
        reducers={name: REDUCERS[spec.reducer] for name, spec in state.items()},
        initial_state={name: schema["default"] for name, schema in fields.items() if "default" in schema},
        input_schema=None if steps_only else workflow.input,
        output=compile_value(output) if output is not None and not steps_only else None,
        output_schema=None if steps_only else workflow.output_schema,
        state_schemas=(schemas := {name: schema for name, schema in fields.items() if _constrains(schema)}),
        list_schemas={name: {k: v for k, v in schema.items() if k not in _LIST_SIZE}
                      for name, schema in schemas.items()},
        timeout=None if steps_only else workflow.timeout,
        reducer_names={name: spec.reducer for name, spec in state.items()},
        state_types={name: _EXACT_TYPES[schema["type"]] for name, schema in schemas.items()
                     if _bare_type(schema)},
    )


# Keywords about the whole list, which a check of only the newly added items cannot judge.
_LIST_SIZE = frozenset({"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
                        "prefixItems", "unevaluatedItems"})


_ANNOTATIONS = frozenset({"default", "description", "title", "examples", "$comment", "deprecated"})


#: The Python types of a JSON value of each type, as the store's JSON reads them back.
_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,), "null": (type(None),)}


def _bare_type(schema: dict[str, Any]) -> bool:
    """Whether a state field's schema asserts its JSON type alone (`{type: integer}`, and
    annotations), so a write of a value of an exact type passes without the validator."""
    kind = schema.get("type")
    return isinstance(kind, str) and kind in _EXACT_TYPES and all(
        key == "type" or key in _ANNOTATIONS for key in schema)


def _constrains(schema: dict[str, Any]) -> bool:
    """Whether a state field's schema can reject a value (`{}` or annotations alone cannot)."""
    return any(key not in _ANNOTATIONS for key in schema)
