"""The file formats as plain objects, for a project the plain loader accepted.

Each class mirrors the pydantic model of the same name (`wfops.model.workflow`,
`deployment`, `sources`): the same fields as instance attributes, by their Python
names (`with_` for `with`), the same defaults, the same few methods; a model's extra
keys (a state field's JSON Schema) are in `model_extra`. The checks read either kind
alike. A test builds both from the same documents and compares them field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from wfops.model import rules
from wfops.model.kinds import StepKind


class PlainModel:
    """Fields in the instance dict (which the checks read, see `checks.context.fields`)."""

    __slots__ = ("__dict__", "model_extra")

    def __init__(self, fields: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        self.__dict__.update(fields)
        self.model_extra = extra

    def check(self) -> None:
        """The rules of this format its schema cannot state (raises `rules.Broken`)."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with some fields replaced, as pydantic's `model_copy` (unchecked)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(update or {})
        copy.model_extra = self.model_extra
        return copy

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__name__}({shown})"


def routes_of(next_: str | None, on: Mapping[str, str] | None) -> dict[str, str]:
    """Outcome -> target, with `next` expanded (shared with the pydantic steps)."""
    table = dict(on or {})
    if next_ is not None:
        table["ok"] = next_
    return table


class Retry(PlainModel):
    attempts: int
    backoff: float


class Catch(PlainModel):
    next: str
    save: str | None


class _Step(PlainModel):
    kind: ClassVar[StepKind]
    id: str
    description: str | None

    def check(self) -> None:
        rules.check_step_id(self.id)


class _Routed(_Step):
    next: str | None
    on: dict[str, str] | None

    def check(self) -> None:
        super().check()
        rules.check_routes(self.next, self.on)

    def routes(self) -> dict[str, str]:
        return routes_of(self.next, self.on)


class CallStep(_Routed):
    kind: ClassVar[StepKind] = "call"


class SubworkflowStep(_Routed):
    kind: ClassVar[StepKind] = "workflow"


class ConditionStep(_Step):
    kind: ClassVar[StepKind] = "condition"
    if_: dict[str, Any]
    then: str
    else_: str

    def check(self) -> None:
        super().check()
        rules.check_condition(self.if_)

    def routes(self) -> dict[str, str]:
        return {"then": self.then, "else": self.else_}


class ForeachStep(_Routed):
    kind: ClassVar[StepKind] = "foreach"
    uses: str | None
    workflow: str | None

    def check(self) -> None:
        super().check()
        rules.check_foreach_body(self.uses, self.workflow)


class ParallelStep(_Routed):
    kind: ClassVar[StepKind] = "parallel"
    parallel: dict[str, list[Any]]

    def check(self) -> None:
        super().check()
        rules.check_branches(self.parallel)


class InterruptStep(_Step):
    kind: ClassVar[StepKind] = "interrupt"
    on: dict[str, str]

    def routes(self) -> dict[str, str]:
        return dict(self.on)


class EndStep(_Step):
    kind: ClassVar[StepKind] = "end"

    def routes(self) -> dict[str, str]:
        return {}


class StateField(PlainModel):
    reducer: str

    def json_schema(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Workflow(PlainModel):
    name: str
    start: str | None
    steps: list[Any]

    @property
    def start_step(self) -> str:
        return self.start or str(self.steps[0].id)


class LocalExecutorSpec(PlainModel):
    kind: str


class DaskExecutorSpec(PlainModel):
    kind: str
    address: str


class Deployment(PlainModel):
    name: str
    workflow: str
    bindings: dict[str, str]

    def check(self) -> None:
        rules.check_bindings(self.bindings)

    @property
    def workflow_name(self) -> str:
        return workflow_name(self.workflow)

    @property
    def pin(self) -> str | None:
        return pin_of(self.workflow)

    def concrete_source(self, logical: str) -> str:
        return self.bindings.get(logical, logical)


def workflow_name(ref: str) -> str:
    """`name` of a deployment's `workflow: name[@sha256:prefix]` (shared with the pydantic model)."""
    return ref.split("@", 1)[0]


def pin_of(ref: str) -> str | None:
    return ref.split("@sha256:", 1)[1] if "@sha256:" in ref else None


class PythonSource(PlainModel):
    kind: str
    module: str


class McpSource(PlainModel):
    kind: str
    command: list[str] | None
    url: str | None
    env: dict[str, str]
    cwd: str | None

    def check(self) -> None:
        rules.check_cwd(self.cwd)
        rules.check_transport(self.command, self.url, self.env, self.cwd)


class SourcesFile(PlainModel):
    sources: dict[str, Any]

    def check(self) -> None:
        rules.check_source_ids(self.sources)


#: `$defs` name (the pydantic class's name) -> plain class.
CLASSES: dict[str, type[PlainModel]] = {cls.__name__: cls for cls in (
    Retry, Catch, CallStep, SubworkflowStep, ConditionStep, ForeachStep, ParallelStep, InterruptStep, EndStep,
    StateField, Workflow, LocalExecutorSpec, DaskExecutorSpec, Deployment, PythonSource, McpSource, SourcesFile)}

#: file kind -> the class of the whole file.
ROOTS: dict[str, type[PlainModel]] = {"workflow": Workflow, "deployment": Deployment, "sources": SourcesFile}
