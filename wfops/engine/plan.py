"""A workflow (its normalized form) compiled once into what the engine needs per step: parsed paths
as closures, routing tables, save targets and the state reducers."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from wfops.compiler.artifact import normalize_workflow
from wfops.engine.reducers import REDUCERS, Reducer
from wfops.engine.values import Getter, Predicate, compile_condition, compile_value
from wfops.model.kinds import STEP_KEYS, StepKind, raw_kind
from wfops.model.paths import parse_save_target

if TYPE_CHECKING:
    from wfops.model.objects import Workflow

#: What the engine plans from: a workflow's normalized form (plain JSON data, as the gate
#: record and the store keep it) or, from callers that hold one, its model.
WorkflowSource: TypeAlias = "Workflow | Mapping[str, Any]"


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


def _common(plan: StepPlan, step: Mapping[str, Any]) -> None:
    plan.routes = dict(step.get("on") or {})
    retry = step.get("retry")
    if retry is not None:
        plan.attempts, plan.backoff = retry["attempts"], retry["backoff"]
    plan.timeout = step.get("timeout")
    catch = step.get("catch")
    if catch is not None:
        plan.catch_next = catch["next"]
        plan.catch_save = compile_save(catch.get("save"))


def compile_step(step: Mapping[str, Any]) -> StepPlan:
    """One step of a normalized workflow (see `wfops.compiler.artifact`: defaults filled in,
    `next` already folded into `on`, unset keys absent)."""
    kind = raw_kind(step)
    sid = step["id"]
    if kind == "call":
        plan = StepPlan(sid, kind, uses=step["uses"], with_=compile_value(step.get("with", {})),
                        save=compile_save(step.get("save")))
    elif kind == "workflow":
        plan = StepPlan(sid, kind, workflow=step["workflow"], with_=compile_value(step.get("with", {})),
                        save=compile_save(step.get("save")))
    elif kind == "condition":
        plan = StepPlan(sid, kind, routes={"then": step["then"], "else": step["else"]},
                        condition=compile_condition(step["if"]), condition_value=compile_value(step["if"]))
        return plan
    elif kind == "foreach":
        plan = StepPlan(sid, kind, uses=step.get("uses"), workflow=step.get("workflow"),
                        with_=compile_value(step.get("with", {})), save=compile_save(step.get("save")),
                        foreach=compile_value(step["foreach"]), parallel=step.get("mode", "serial") == "parallel",
                        concurrency=step.get("concurrency"), on_item_error=step.get("on_item_error", "fail"),
                        errors=compile_save(step.get("errors")), save_each=compile_save(step.get("save_each")))
    elif kind == "parallel":
        plan = StepPlan(sid, kind, on_branch_error=step.get("on_branch_error", "fail"),
                        errors=compile_save(step.get("errors")))
    elif kind == "interrupt":
        plan = StepPlan(sid, kind, interrupt=step["interrupt"], request=compile_value(step.get("request")),
                        resume_schema=step.get("resume_schema"), save=compile_save(step.get("save")))
    elif kind == "end":
        return StepPlan(sid, kind, end=step["end"])
    else:
        raise ValueError(f"step {sid!r} has none of the keys {', '.join(STEP_KEYS)}")
    _common(plan, step)
    return plan


def _compile_steps(workflow: Mapping[str, Any], steps: list[Mapping[str, Any]]) -> dict[str, StepPlan]:
    plans = {step["id"]: compile_step(step) for step in steps}
    for step in steps:
        branches = step.get("parallel")
        if branches and raw_kind(step) == "parallel":
            plans[step["id"]].branches = {name: _branch_plan(workflow, branch) for name, branch in branches.items()}
    return plans


def _branch_plan(workflow: Mapping[str, Any], steps: list[Mapping[str, Any]]) -> Plan:
    """A parallel branch runs as a frame of its own: the workflow's state fields, its own steps."""
    whole = _compile(workflow, steps_only=True)
    whole.start, whole.steps = steps[0]["id"], _compile_steps(workflow, steps)
    return whole


def compile_workflow(workflow: WorkflowSource) -> Plan:
    """The plan of a workflow, from its normalized form (a record, a stored artifact) or a model."""
    if not isinstance(workflow, Mapping):
        workflow = normalize_workflow(workflow)
    return _compile(workflow)


def _state_schema(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A normalized state field is its JSON Schema plus `reducer`."""
    return {key: value for key, value in spec.items() if key != "reducer"}


def _compile(workflow: Mapping[str, Any], *, steps_only: bool = False) -> Plan:
    state: Mapping[str, Mapping[str, Any]] = workflow.get("state") or {}
    fields = {name: _state_schema(spec) for name, spec in state.items()}
    output = workflow.get("output")
    return Plan(
        name=workflow["name"],
        start=workflow.get("start") or workflow["steps"][0]["id"],
        steps={} if steps_only else _compile_steps(workflow, workflow["steps"]),
        reducers={name: REDUCERS[spec.get("reducer", "replace")] for name, spec in state.items()},
        initial_state={name: schema["default"] for name, schema in fields.items() if "default" in schema},
        input_schema=None if steps_only else workflow.get("input"),
        output=compile_value(output) if output is not None and not steps_only else None,
        output_schema=None if steps_only else workflow.get("output_schema"),
        state_schemas=(schemas := {name: schema for name, schema in fields.items() if _constrains(schema)}),
        list_schemas={name: {k: v for k, v in schema.items() if k not in _LIST_SIZE}
                      for name, schema in schemas.items()},
        timeout=None if steps_only else workflow.get("timeout"),
    )


# Keywords about the whole list, which a check of only the newly added items cannot judge.
_LIST_SIZE = frozenset({"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
                        "prefixItems", "unevaluatedItems"})


_ANNOTATIONS = frozenset({"default", "description", "title", "examples", "$comment", "deprecated"})


def _constrains(schema: dict[str, Any]) -> bool:
    """Whether a state field's schema can reject a value (`{}` or annotations alone cannot)."""
    return any(key not in _ANNOTATIONS for key in schema)
