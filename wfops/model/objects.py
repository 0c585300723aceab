"""The file formats as plain objects, for a project the plain loader accepted.

A format is declared once, by its pydantic models (`wfops.model.workflow`, `deployment`,
`sources`). Their fields reach the plain classes through `objects_generated` (generated
from the models, `python -m wfops.model.generate`): each class here is its model's
generated field list plus the few methods the checks, the compiler and the engine call.
Fields are instance attributes by their Python names (`with_` for `with`) with the
models' defaults; a model's extra keys (a state field's JSON Schema) are in `model_extra`.
The checks read either kind of object alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from wfops.model import objects_generated as declared
from wfops.model import rules
from wfops.model.kinds import StepKind
from wfops.model.plain_base import PlainModel, attribute_of, key_of

__all__ = ["PlainModel", "attribute_of", "key_of"]  # re-exported: the plain objects' base


def from_model(value: Any) -> Any:
    """A pydantic model (the loader's last word on a file the plain loader was not sure of) as
    its plain object, recursively: downstream code sees one kind of object."""
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


class Retry(declared.RetryFields):
    pass


class Catch(declared.CatchFields):
    pass


class Cache(declared.CacheFields):
    pass


class _Step(declared.StepBaseFields):
    kind: ClassVar[StepKind]

    def check(self) -> None:
        rules.check_step_id(self.id)

    def routes(self) -> dict[str, str]:
        raise NotImplementedError


class _Routed(declared.RoutedFields, _Step):
    def check(self) -> None:
        super().check()
        rules.check_routes(self.next, self.on)

    def routes(self) -> dict[str, str]:
        return routes_of(self.next, self.on)


class CallStep(declared.CallStepFields, _Routed):
    pass


class SubworkflowStep(declared.SubworkflowStepFields, _Routed):
    pass


class ConditionStep(declared.ConditionStepFields, _Step):
    def check(self) -> None:
        super().check()
        rules.check_condition(self.if_)

    def routes(self) -> dict[str, str]:
        return {"then": self.then, "else": self.else_}


class ForeachStep(declared.ForeachStepFields, _Routed):
    def check(self) -> None:
        super().check()
        rules.check_foreach_body(self.uses, self.workflow)
        rules.check_item_name(self.as_)


class ParallelStep(declared.ParallelStepFields, _Routed):
    def check(self) -> None:
        super().check()
        rules.check_branches(self.parallel)
        rules.check_branch_conditions(self.parallel, self.when)


class InterruptStep(declared.InterruptStepFields, _Step):
    def routes(self) -> dict[str, str]:
        return dict(self.on)


class EndStep(declared.EndStepFields, _Step):
    def routes(self) -> dict[str, str]:
        return {}


Step = CallStep | SubworkflowStep | ConditionStep | ForeachStep | ParallelStep | InterruptStep | EndStep


class StateField(declared.StateFieldFields):
    def json_schema(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Workflow(declared.WorkflowFields):
    @property
    def start_step(self) -> str:
        return self.start or self.steps[0].id


class LocalExecutorSpec(declared.LocalExecutorSpecFields):
    pass


class DaskExecutorSpec(declared.DaskExecutorSpecFields):
    pass


class ScheduleEntry(declared.ScheduleEntryFields):
    @property
    def key(self) -> str:
        """What names the entry in its slots: its `name`, or its cron and timezone."""
        return self.name or f"{self.cron.strip()} {self.timezone}"


class Deployment(declared.DeploymentFields):
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


class PythonSource(declared.PythonSourceFields):
    pass


class ToolCache(declared.ToolCacheFields):
    pass


class ToolDefaults(declared.ToolDefaultsFields):
    pass


class OAuthClientCredentials(declared.OAuthClientCredentialsFields):
    def check(self) -> None:
        rules.check_secret_reference(self.client_secret)


class McpSource(declared.McpSourceFields):
    def check(self) -> None:
        rules.check_cwd(self.cwd)
        rules.check_transport(self.command, self.url, self.env, self.cwd)
        rules.check_headers_need_url(self.url, self.headers)
        rules.check_auth_needs_url(self.url, self.headers, self.auth)


class OpenapiSource(declared.OpenapiSourceFields):
    def check(self) -> None:
        rules.check_spec_path(self.spec)


class CommandCapability(declared.CommandCapabilityFields):
    def check(self) -> None:
        rules.check_argv_form(self.argv)
        rules.check_cwd(self.cwd)


class CommandSource(declared.CommandSourceFields):
    def check(self) -> None:
        rules.check_cwd(self.cwd)


class SourcesFile(declared.SourcesFileFields):
    def check(self) -> None:
        rules.check_source_ids(self.sources)


def _classes() -> dict[str, type[PlainModel]]:
    missing = [name for name in declared.MODELS if name not in globals()]
    if missing:  # a new model (a new nested kind of object): its class goes here, methods or not
        raise ImportError(f"wfops.model.objects has no class for the model(s) {', '.join(missing)}; "
                          f"add `class {missing[0]}(declared.{missing[0]}Fields)`")
    return {name: globals()[name] for name in declared.MODELS}


#: `$defs` name (the pydantic class's name) -> plain class, one for every model.
CLASSES: dict[str, type[PlainModel]] = _classes()

#: Step kind -> its class.
STEP_CLASSES: dict[StepKind, type[_Step]] = {
    cls.kind: cls for cls in CLASSES.values() if issubclass(cls, _Step)}

#: file kind -> the class of the whole file.
ROOTS: dict[str, type[PlainModel]] = {kind: CLASSES[name] for kind, name in declared.ROOTS.items()}
