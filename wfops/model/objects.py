"""The file formats as plain objects, for a project the plain loader accepted.

Each class mirrors the pydantic model of the same name (`wfops.model.workflow`,
`deployment`, `sources`): the same fields as instance attributes, by their Python
names (`with_` for `with`), the same defaults, the same few methods; a model's extra
keys (a state field's JSON Schema) are in `model_extra`. The checks read either kind
alike. A test builds both from the same documents and compares them field by field.
"""

from __future__ import annotations

import keyword
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

    def to_data(self, *, drop_none: bool = False) -> dict[str, Any]:
        """The fields under their file keys (`with`), nested models as data, then the extra keys.
        `drop_none`: leave out fields that are None (unset and null mean the same), never a
        null inside user data (`with: {x: null}`)."""
        out = {key_of(name): _data(value, drop_none) for name, value in self.__dict__.items()
               if value is not None or not drop_none}
        for key, value in (self.model_extra or {}).items():
            out[key] = _data(value, drop_none)
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__name__}({shown})"


def _data(value: Any, drop_none: bool) -> Any:
    if isinstance(value, PlainModel):
        return value.to_data(drop_none=drop_none)
    if isinstance(value, Mapping):
        return {str(key): _data(item, drop_none) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_data(item, drop_none) for item in value]
    return value


def attribute_of(key: str) -> str:
    """The attribute a file key is held in (pydantic's alias convention here: `with` -> `with_`)."""
    return key + "_" if keyword.iskeyword(key) else key


def key_of(attribute: str) -> str:
    return attribute[:-1] if attribute.endswith("_") and keyword.iskeyword(attribute[:-1]) else attribute


def from_model(value: Any) -> Any:
    """A pydantic model (the loader's last word on a file the plain loader was not sure of) as
    its plain twin, recursively: downstream code sees one kind of object."""
    cls = CLASSES.get(type(value).__name__)
    if cls is not None and hasattr(type(value), "model_fields"):
        return cls({name: from_model(item) for name, item in value.__dict__.items()}, value.model_extra)
    if isinstance(value, dict):
        return {key: from_model(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_model(item) for item in value]
    return value


def routes_of(next_: str | None, on: Mapping[str, str] | None) -> dict[str, str]:
    """Outcome -> target, with `next` expanded."""
    table = dict(on or {})
    if next_ is not None:
        table["ok"] = next_
    return table


Save = str | dict[str, str]


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

    def routes(self) -> dict[str, str]:
        raise NotImplementedError


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
    uses: str
    with_: dict[str, Any]
    save: Save | None
    retry: Retry | None
    timeout: float | None
    catch: Catch | None


class SubworkflowStep(_Routed):
    kind: ClassVar[StepKind] = "workflow"
    workflow: str
    with_: dict[str, Any]
    save: Save | None
    timeout: float | None
    catch: Catch | None


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
    foreach: str
    uses: str | None
    workflow: str | None
    with_: dict[str, Any]
    save: Save | None
    save_each: Save | None
    mode: str
    concurrency: int | None
    on_item_error: str
    errors: str | None
    retry: Retry | None
    timeout: float | None
    catch: Catch | None

    def check(self) -> None:
        super().check()
        rules.check_foreach_body(self.uses, self.workflow)


class ParallelStep(_Routed):
    kind: ClassVar[StepKind] = "parallel"
    parallel: dict[str, list[Step]]
    on_branch_error: str
    errors: str | None
    timeout: float | None
    catch: Catch | None

    def check(self) -> None:
        super().check()
        rules.check_branches(self.parallel)


class InterruptStep(_Step):
    kind: ClassVar[StepKind] = "interrupt"
    interrupt: str
    request: Any
    resume_schema: dict[str, Any] | None
    save: Save | None
    on: dict[str, str]

    def routes(self) -> dict[str, str]:
        return dict(self.on)


class EndStep(_Step):
    kind: ClassVar[StepKind] = "end"
    end: str

    def routes(self) -> dict[str, str]:
        return {}


Step = CallStep | SubworkflowStep | ConditionStep | ForeachStep | ParallelStep | InterruptStep | EndStep
#: Step kind -> its class.
STEP_CLASSES: dict[StepKind, type[_Step]] = {cls.kind: cls for cls in (
    CallStep, SubworkflowStep, ConditionStep, ForeachStep, ParallelStep, InterruptStep, EndStep)}


class StateField(PlainModel):
    reducer: str

    def json_schema(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Workflow(PlainModel):
    name: str
    version: int | str | None
    description: str | None
    input: dict[str, Any] | None
    state: dict[str, StateField]
    output: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    start: str | None
    timeout: float | None
    steps: list[Step]

    @property
    def start_step(self) -> str:
        return self.start or self.steps[0].id


class LocalExecutorSpec(PlainModel):
    kind: str


class DaskExecutorSpec(PlainModel):
    kind: str
    address: str


class Deployment(PlainModel):
    name: str
    description: str | None
    workflow: str
    bindings: dict[str, str]
    drift: str
    input: dict[str, Any]
    secrets: list[str]
    executor: LocalExecutorSpec | DaskExecutorSpec

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
    """`name` of a deployment's `workflow: name[@sha256:prefix]`."""
    return ref.split("@", 1)[0]


def pin_of(ref: str) -> str | None:
    return ref.split("@sha256:", 1)[1] if "@sha256:" in ref else None


class PythonSource(PlainModel):
    kind: str
    module: str
    description: str | None


class McpSource(PlainModel):
    kind: str
    command: list[str] | None
    url: str | None
    env: dict[str, str]
    cwd: str | None
    timeout: float
    description: str | None

    def check(self) -> None:
        rules.check_cwd(self.cwd)
        rules.check_transport(self.command, self.url, self.env, self.cwd)


class SourcesFile(PlainModel):
    sources: dict[str, PythonSource | McpSource]

    def check(self) -> None:
        rules.check_source_ids(self.sources)


#: `$defs` name (the pydantic class's name) -> plain class.
CLASSES: dict[str, type[PlainModel]] = {cls.__name__: cls for cls in (
    Retry, Catch, CallStep, SubworkflowStep, ConditionStep, ForeachStep, ParallelStep, InterruptStep, EndStep,
    StateField, Workflow, LocalExecutorSpec, DaskExecutorSpec, Deployment, PythonSource, McpSource, SourcesFile)}

#: file kind -> the class of the whole file.
ROOTS: dict[str, type[PlainModel]] = {"workflow": Workflow, "deployment": Deployment, "sources": SourcesFile}
