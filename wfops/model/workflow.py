"""The workflow file format (`workflows/*.yaml`, docs/file-format.md) as pydantic models.

Step kinds form a discriminated union picked by which key is present, so a
typo inside one kind reports that kind's error, never a list of every branch.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from wfops.model import rules
from wfops.model.errors import enforce
from wfops.model.kinds import KIND_KEYS, STEP_KEYS, StepKind, walk_steps
from wfops.model.rules import CONDITION_OPERATORS, ERROR_TYPES

NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"
STEP_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
REDUCERS = ("replace", "append", "extend", "union", "merge", "add", "min", "max")

Reducer = Literal["replace", "append", "extend", "union", "merge", "add", "min", "max"]
StepRef = Annotated[str, Field(pattern=STEP_ID_PATTERN, description="A step id, or `end`.")]
SaveTarget = Annotated[str, Field(pattern=r"^state\.[^.\s]+(\.[^.\s]+)*$", description="`state.<field>[.<key>...]`")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)


Condition = Annotated[
    dict[str, Any],
    Field(
        description="A structured condition: {eq: [a, b]}, ne, gt, ge, lt, le, {in: [x, list]}, "
        "{exists: $path}, {and: [...]}, {or: [...]}, {not: cond}. Operands are paths or literals.",
        json_schema_extra={"minProperties": 1, "maxProperties": 1,
                           "propertyNames": {"enum": list(CONDITION_OPERATORS)}},
    ),
]


ErrorType = Annotated[str, Field(
    pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$",
    description="An error type: " + ", ".join(ERROR_TYPES) + " (`CallFailed` takes any error the capability "
    "raised itself), or the exact type a capability's exception carries (e.g. `ValueError`).",
    json_schema_extra={"examples": list(ERROR_TYPES)})]


class Retry(_Strict):
    attempts: int = Field(3, ge=1, le=100, description="Total attempts, the first included.")
    backoff: float = Field(0.5, ge=0, le=3600, description="Seconds before the 2nd attempt; doubles each time.")
    on: list[ErrorType] | None = Field(None, min_length=1, description="The error types that are retried "
                                       "(default: every retryable one; InvalidInput never is).")
    max_delay: float | None = Field(None, ge=0, le=3600, description="The longest sleep between attempts, "
                                    "in seconds (the doubling stops there).")
    jitter: Literal["none", "full"] = Field("none", description="full: each sleep is drawn uniformly from "
                                            "[0, delay]; none: the delay itself.")


DURATION_PATTERN = r"^[0-9]+(\.[0-9]+)?[smhd]$"
Duration = Annotated[
    Annotated[str, Field(pattern=DURATION_PATTERN)] | Annotated[float, Field(gt=0)],
    Field(description="`30s`, `10m`, `1h`, `1d`, or a number of seconds."),
]


class Cache(_Strict):
    ttl: Duration | None = Field(None, description="How long a result is served; none: no expiry.")
    key: Any = Field(None, description="Added to the key (paths resolved), e.g. `$input.date`.")


class Catch(_Strict):
    errors: list[ErrorType] | None = Field(None, min_length=1, description="The error types this entry "
                                           "takes (default: every catchable failure).")
    next: StepRef = Field(description="Step to route to when the step still fails.")
    save: SaveTarget | None = Field(None, description="Where to save `{type, message, step}`.")


def _catch_form(value: Any) -> str:
    return "catch-list" if isinstance(value, list) else "catch-one"


CatchSpec = Annotated[
    Annotated[Catch, Tag("catch-one")] | Annotated[list[Catch], Field(min_length=1), Tag("catch-list")],
    Discriminator(_catch_form),
    Field(description="Where a failure goes: one entry, or a list tried in order (the first whose "
          "`errors` match takes it)."),
]


class _StepBase(_Strict):
    kind: ClassVar[StepKind]
    id: str = Field(pattern=STEP_ID_PATTERN, description="Unique step id in this workflow; `end` is reserved.")
    description: str | None = Field(None, description="What the step does, for people (not used by the run).")

    @field_validator("id")
    @classmethod
    def _not_end(cls, value: str) -> str:
        enforce(rules.check_step_id, value)
        return value


class _Routed(_StepBase):
    next: StepRef | None = Field(None, description="Shorthand for `on: {ok: <step>}`.")
    on: dict[str, StepRef] | None = Field(None, description="Outcome -> next step (or `end`).")

    @model_validator(mode="after")
    def _next_or_on(self) -> _Routed:
        enforce(rules.check_routes, self.next, self.on)
        return self


def _save_form(value: Any) -> str:
    return "save-map" if isinstance(value, dict) else "save-path"


Save = Annotated[
    Annotated[SaveTarget, Tag("save-path")] | Annotated[dict[str, SaveTarget], Tag("save-map")],
    Discriminator(_save_form),
]


class CallStep(_Routed):
    kind: ClassVar[StepKind] = "call"
    uses: str = Field(pattern=r"^[A-Za-z0-9_-]+\.[^\s]+$", description="`<logical source>.<capability>`")
    with_: dict[str, Any] = Field(default_factory=dict, alias="with", description="Input bindings.")
    save: Save | None = Field(None, description="Output field -> state path, or one state path for the whole output.")
    retry: Retry | None = Field(None, description="Attempts and backoff when the call fails.")
    timeout: float | None = Field(None, gt=0, description="Seconds per attempt.")
    catch: CatchSpec | None = Field(None, description="Where to route (and save the error) when the step still fails.")
    cache: bool | Cache | None = Field(None, description="Serve a success from the step cache: `true` (no "
                                       "expiry), `{ttl, key}`, or `false` against the capability's default.")


class SubworkflowStep(_Routed):
    kind: ClassVar[StepKind] = "workflow"
    workflow: str = Field(pattern=NAME_PATTERN, description="Name of the child workflow.")
    with_: dict[str, Any] = Field(default_factory=dict, alias="with", description="The child's input.")
    save: Save | None = Field(None, description="Output field of the child -> state path, or one state path "
                              "for its whole output.")
    timeout: float | None = Field(None, gt=0, description="Seconds for the child workflow.")
    catch: CatchSpec | None = Field(None, description="Where to route (and save the error) when the child fails.")


class ConditionStep(_StepBase):
    kind: ClassVar[StepKind] = "condition"
    if_: Condition = Field(alias="if")
    then: StepRef
    else_: StepRef = Field(alias="else")

    @field_validator("if_")
    @classmethod
    def _valid(cls, value: dict[str, Any]) -> dict[str, Any]:
        enforce(rules.check_condition, value)
        return value


class ForeachStep(_Routed):
    kind: ClassVar[StepKind] = "foreach"
    foreach: str = Field(pattern=r"^\$[^$]", description="A path to an array (`$$` would be a literal).")
    uses: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]+\.[^\s]+$",
                             description="`<logical source>.<capability>` called once per item (or `workflow`).")
    workflow: str | None = Field(None, pattern=NAME_PATTERN,
                                 description="Child workflow run once per item (or `uses`).")
    with_: dict[str, Any] = Field(default_factory=dict, alias="with", description="Per item; may use $item, $index.")
    as_: str = Field("item", alias="as", pattern=r"^[a-z][a-z0-9_]*$",
                     description="The item's name in `with`: `$item` by default, `$<as>` when given.")
    save: Save | None = Field(None, description="Where the list of item results goes.")
    save_each: Save | None = Field(None, description="Where each item's result goes, through the field's "
                                   "reducer, in item order, as the items commit (e.g. an `add` field sums them).")
    mode: Literal["serial", "parallel"] = Field("serial", description="serial: one item after the other; "
                                                "parallel: items side by side (see `concurrency`).")
    concurrency: int | None = Field(None, ge=1, le=1000, description="Items at once in parallel mode "
                                    "(default: all).")
    on_item_error: Literal["fail", "collect", "skip"] = Field(
        "fail", description="fail: a failing item fails the step; collect: the failures are saved to `errors`; "
        "skip: failed items are left out.")
    errors: SaveTarget | None = Field(None, description="Where collected item errors go.")
    retry: Retry | None = Field(None, description="Attempts and backoff for each item's call.")
    timeout: float | None = Field(None, gt=0, description="Seconds per item attempt.")
    catch: CatchSpec | None = Field(None, description="Where to route (and save the error) when the step still fails.")

    @model_validator(mode="after")
    def _one_body(self) -> ForeachStep:
        enforce(rules.check_foreach_body, self.uses, self.workflow)
        enforce(rules.check_item_name, self.as_)
        return self


BranchName = Annotated[str, Field(pattern=STEP_ID_PATTERN, description="A branch name (like a step id).")]


class ParallelStep(_Routed):
    """Branches run side by side, each from the state as it was when the step started; when all
    have finished, their writes go through the state fields' reducers in branch-name order."""

    kind: ClassVar[StepKind] = "parallel"
    parallel: dict[BranchName, list[Step]] = Field(
        min_length=1, description="Branch name -> its steps (routed among themselves; `end` finishes the "
        "branch). A branch that is a subworkflow is one `workflow:` step.")
    when: dict[BranchName, Condition] | None = Field(
        None, description="Branch name -> a condition (as in `if:`): the branch runs only when it holds; "
        "a skipped branch is recorded in the trace and the join waits for the branches that ran.")
    on_branch_error: Literal["fail", "collect"] = Field(
        "fail", description="fail: a failing branch fails the step and the others are cancelled; collect: "
        "the other branches finish and the failures are saved to `errors`.")
    errors: SaveTarget | None = Field(None, description="Where collected branch errors go "
                                      "(`[{branch, type, message, step}]`).")
    timeout: float | None = Field(None, gt=0, description="Seconds for all the branches.")
    catch: CatchSpec | None = Field(None, description="Where to route (and save the error) when the step fails.")

    @field_validator("parallel")
    @classmethod
    def _branches_have_steps(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        enforce(rules.check_branches, value)
        return value

    @model_validator(mode="after")
    def _when_names_branches(self) -> ParallelStep:
        enforce(rules.check_branch_conditions, self.parallel, self.when)
        return self


class InterruptStep(_StepBase):
    kind: ClassVar[StepKind] = "interrupt"
    interrupt: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Kind of request, e.g. approval.")
    request: Any = Field(None, description="What the run asks for; paths resolved.")
    resume_schema: dict[str, Any] | None = Field(None, description="JSON Schema of the resume payload.")
    save: Save | None = Field(None, description="Payload field -> state path, or one state path for the "
                              "whole payload.")
    on: dict[str, StepRef] = Field(description="Resume outcome -> next step.", min_length=1)


class EndStep(_StepBase):
    kind: ClassVar[StepKind] = "end"
    end: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="The workflow outcome.")


#: The key that makes a step a kind -> the model of that kind (in KIND_KEYS order).
STEP_KINDS: dict[str, type[_StepBase]] = {
    KIND_KEYS[model.kind]: model
    for model in (EndStep, InterruptStep, ParallelStep, ForeachStep, ConditionStep, SubworkflowStep, CallStep)
}


def step_kind_of(value: Any) -> str | None:
    """The kind key present in a raw step (or the kind of a model)."""
    if isinstance(value, dict):
        for key in STEP_KINDS:
            if key in value:
                return key
        return None
    for key, model in STEP_KINDS.items():
        if isinstance(value, model):
            return key
    return None


Step = Annotated[
    Annotated[CallStep, Tag("uses")]
    | Annotated[SubworkflowStep, Tag("workflow")]
    | Annotated[ConditionStep, Tag("if")]
    | Annotated[ForeachStep, Tag("foreach")]
    | Annotated[ParallelStep, Tag("parallel")]
    | Annotated[InterruptStep, Tag("interrupt")]
    | Annotated[EndStep, Tag("end")],
    Discriminator(step_kind_of, custom_error_type="step-kind",
                  custom_error_message="a step needs one of the keys: " + ", ".join(reversed(STEP_KEYS))),
]


ParallelStep.model_rebuild()
__all__ = ["walk_steps"]  # re-exported: the step walk belongs to the kinds vocabulary


class StateField(BaseModel):
    """A JSON Schema for one state field, plus the reducer that merges writes into it."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    reducer: Reducer = Field("replace", description="How writes merge: " + ", ".join(REDUCERS))


class Workflow(_Strict):
    name: str = Field(pattern=NAME_PATTERN, description="Unique in the project.")
    version: int | float | str | None = Field(None, description="Optional human label (a number or a string).")
    description: str | None = Field(None, description="What the workflow does, for people (shown by tools).")
    input: dict[str, Any] | None = Field(None, description="JSON Schema (2020-12) of the run input.")
    state: dict[str, StateField] = Field(default_factory=dict, description="Field -> JSON Schema + reducer.")
    output: dict[str, Any] | None = Field(None, description="Output field -> path or literal.")
    output_schema: dict[str, Any] | None = Field(None, description="JSON Schema the output must match.")
    start: StepRef | None = Field(None, description="First step; default: the first in `steps`.")
    timeout: float | None = Field(None, gt=0, description="Seconds for the whole run (waits at interrupts "
                                  "not counted); past it the run fails with a `Timeout` error.")
    steps: list[Step] = Field(min_length=1, description="The steps; the run starts at `start` (default: the "
                              "first) and follows each step's routes.")

