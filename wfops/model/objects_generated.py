"""The fields of the plain objects, generated from the pydantic models: do not edit.

Regenerate with `python -m wfops.model.generate` (a test fails while this is stale).
`wfops.model.objects` adds the methods; the plain loader fills the fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from wfops.model.kinds import StepKind
from wfops.model.plain_base import PlainModel

if TYPE_CHECKING:
    from wfops.model import objects

#: The plain class of each model (by the model's name, as the schemas' `$defs` call it).
MODELS: tuple[str, ...] = (
    "Workflow",
    "StateField",
    "CallStep",
    "Retry",
    "Catch",
    "Cache",
    "SubworkflowStep",
    "ConditionStep",
    "ForeachStep",
    "ParallelStep",
    "InterruptStep",
    "EndStep",
    "Deployment",
    "LocalExecutorSpec",
    "DaskExecutorSpec",
    "ScheduleEntry",
    "SourcesFile",
    "PythonSource",
    "McpSource",
    "ToolDefaults",
    "ToolCache",
    "OAuthClientCredentials",
    "OpenapiSource",
    "CommandSource",
    "CommandCapability",
)

#: File kind -> the model of the whole file.
ROOTS: dict[str, str] = {
    "workflow": "Workflow",
    "deployment": "Deployment",
    "sources": "SourcesFile",
}


class WorkflowFields(PlainModel):
    name: str
    version: int | float | str | None
    description: str | None
    input: dict[str, Any] | None
    state: dict[str, objects.StateField]
    output: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    start: str | None
    timeout: float | None
    steps: list[objects.CallStep | objects.SubworkflowStep | objects.ConditionStep | objects.ForeachStep | objects.ParallelStep | objects.InterruptStep | objects.EndStep]


class StateFieldFields(PlainModel):
    reducer: Literal["replace", "append", "extend", "union", "merge", "add", "min", "max"]


class StepBaseFields(PlainModel):
    kind: ClassVar[StepKind]
    id: str
    description: str | None


class RoutedFields(StepBaseFields):
    next: str | None
    on: dict[str, str] | None


class CallStepFields(RoutedFields):
    kind: ClassVar[StepKind] = "call"
    uses: str
    with_: dict[str, Any]
    save: str | dict[str, str] | None
    retry: objects.Retry | None
    timeout: float | None
    catch: objects.Catch | list[objects.Catch] | None
    cache: bool | objects.Cache | None


class RetryFields(PlainModel):
    attempts: int
    backoff: float
    on: list[str] | None
    max_delay: float | None
    jitter: Literal["none", "full"]


class CatchFields(PlainModel):
    errors: list[str] | None
    next: str
    save: str | None


class CacheFields(PlainModel):
    ttl: str | float | None
    key: Any


class SubworkflowStepFields(RoutedFields):
    kind: ClassVar[StepKind] = "workflow"
    workflow: str
    with_: dict[str, Any]
    save: str | dict[str, str] | None
    timeout: float | None
    catch: objects.Catch | list[objects.Catch] | None


class ConditionStepFields(StepBaseFields):
    kind: ClassVar[StepKind] = "condition"
    if_: dict[str, Any]
    then: str
    else_: str


class ForeachStepFields(RoutedFields):
    kind: ClassVar[StepKind] = "foreach"
    foreach: str
    uses: str | None
    workflow: str | None
    with_: dict[str, Any]
    as_: str
    save: str | dict[str, str] | None
    save_each: str | dict[str, str] | None
    mode: Literal["serial", "parallel"]
    concurrency: int | None
    on_item_error: Literal["fail", "collect", "skip"]
    errors: str | None
    retry: objects.Retry | None
    timeout: float | None
    catch: objects.Catch | list[objects.Catch] | None


class ParallelStepFields(RoutedFields):
    kind: ClassVar[StepKind] = "parallel"
    parallel: dict[str, list[objects.CallStep | objects.SubworkflowStep | objects.ConditionStep | objects.ForeachStep | objects.ParallelStep | objects.InterruptStep | objects.EndStep]]
    when: dict[str, dict[str, Any]] | None
    on_branch_error: Literal["fail", "collect"]
    errors: str | None
    timeout: float | None
    catch: objects.Catch | list[objects.Catch] | None


class InterruptStepFields(StepBaseFields):
    kind: ClassVar[StepKind] = "interrupt"
    interrupt: str
    request: Any
    resume_schema: dict[str, Any] | None
    save: str | dict[str, str] | None
    on: dict[str, str]


class EndStepFields(StepBaseFields):
    kind: ClassVar[StepKind] = "end"
    end: str


class DeploymentFields(PlainModel):
    name: str
    description: str | None
    workflow: str
    bindings: dict[str, str]
    drift: Literal["fail", "warn"]
    input: dict[str, Any]
    secrets: list[str]
    executor: objects.LocalExecutorSpec | objects.DaskExecutorSpec
    schedule: list[objects.ScheduleEntry]


class LocalExecutorSpecFields(PlainModel):
    kind: Literal["local"]


class DaskExecutorSpecFields(PlainModel):
    kind: Literal["dask"]
    address: str


class ScheduleEntryFields(PlainModel):
    name: str | None
    cron: str
    timezone: str
    input: dict[str, Any]
    overlap: Literal["skip", "allow", "cancel_previous"]
    missed: Literal["latest", "all", "none"]
    window: str | None
    enabled: bool


class SourcesFileFields(PlainModel):
    sources: dict[str, objects.PythonSource | objects.McpSource | objects.OpenapiSource | objects.CommandSource]


class PythonSourceFields(PlainModel):
    kind: Literal["python"]
    module: str
    description: str | None


class McpSourceFields(PlainModel):
    kind: Literal["mcp"]
    command: list[str] | None
    url: str | None
    env: dict[str, str]
    cwd: str | None
    timeout: float
    tools: dict[str, objects.ToolDefaults]
    description: str | None
    headers: dict[str, str]
    log_level: Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off"]
    auth: objects.OAuthClientCredentials | None


class ToolDefaultsFields(PlainModel):
    retry: objects.Retry | None
    timeout: float | None
    cache: bool | str | float | objects.ToolCache | None


class ToolCacheFields(PlainModel):
    ttl: str | float | None
    unannotated: bool


class OAuthClientCredentialsFields(PlainModel):
    kind: Literal["client_credentials"]
    issuer: str
    client_id: str
    client_secret: str
    scope: str | None
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"]


class OpenapiSourceFields(PlainModel):
    kind: Literal["openapi"]
    spec: str
    base_url: str
    headers: dict[str, str]
    timeout: float
    operations: list[str] | None
    max_body_bytes: int
    description: str | None


class CommandSourceFields(PlainModel):
    kind: Literal["command"]
    capabilities: dict[str, objects.CommandCapability]
    cwd: str | None
    env: dict[str, str]
    timeout: float
    max_output_bytes: int
    description: str | None


class CommandCapabilityFields(PlainModel):
    description: str | None
    argv: list[str]
    shell: bool
    input: dict[str, Any]
    output: dict[str, Any]
    stdout: Literal["text", "json", "jsonl"]
    outcomes: dict[str, str]
    cwd: str | None
    env: dict[str, str]
    timeout: float | None
