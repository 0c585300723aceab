"""What the `wfops mcp` tools return. Pydantic models, so each tool declares an output
schema and clients receive `structured_content` they can rely on.

Every result carries `ok`, `error` (a known failure: what and how to fix it),
`diagnostics` (findings, each with its file, line, column and hint) and `next_steps` (advice, next to the findings,
never instead of them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from wfops.api.runs import RUN_DETAIL_KEYS


class DiagnosticOut(BaseModel):
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    file: str
    line: int
    column: int
    hint: str | None = None
    workflow: str | None = Field(None, description="The workflow the finding is about, where one is.")
    deployment: str | None = Field(None, description="The deployment, where one is.")
    source: str | None = Field(None, description="The source id, where one is.")
    step: str | None = Field(None, description="The step id, where one is.")

    @classmethod
    def of(cls, diagnostic: Any) -> DiagnosticOut:
        return cls(**diagnostic.to_dict(subject=True))


class ErrorOut(BaseModel):
    type: str = Field(description="e.g. RefusedError, UnknownRunError, InvalidArgument, Unavailable")
    message: str
    hint: str | None = None
    argument: str | None = Field(None, description="The argument at fault (InvalidArgument).")


class NextAction(BaseModel):
    """A tool call an agent can make as given."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    reason: str


class CutOut(BaseModel):
    """A value cut so the result fits `max_chars`."""

    path: str = Field(description="JSON Pointer of the cut value in this result.")
    chars: int = Field(description="Size of the whole value, as JSON text.")
    get: NextAction | None = Field(None, description="The call that returns the whole value (in pages).")


class Envelope(BaseModel):
    ok: bool
    error: ErrorOut | None = None
    diagnostics: list[DiagnosticOut] = Field(default_factory=list)
    next_actions: list[NextAction] = Field(default_factory=list,
                                           description="Tool calls that usually come next, callable as given.")
    next_steps: list[str] = Field(default_factory=list, description="The same advice as plain text.")
    cuts: list[CutOut] = Field(default_factory=list, description="Values cut to fit max_chars, and how to "
                                                                 "get each whole.")


class ValidateResult(Envelope):
    checked: list[str] = Field(default_factory=list, description="Files (or the inline name) checked.")
    static_checks: bool = Field(True, description="False when only syntax and schema could be checked.")


class CompileResult(Envelope):
    lock: str | None = None
    changed: bool = False
    changes: list[str] = Field(default_factory=list)
    workflows: dict[str, str] = Field(default_factory=dict, description="workflow -> artifact hash")


class CheckResult(Envelope):
    live: bool = False


class CapabilityOut(BaseModel):
    ref: str
    source: str
    name: str
    description: str = ""
    outcomes: list[str]
    contract_hash: str
    origin: str = Field(description="live, or lock (an MCP source's contract as wfops.lock holds it)")
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, Any] = Field(default_factory=dict, description="Hints the source declares, e.g. "
                                        "an MCP tool's readOnlyHint, destructiveHint, idempotentHint.")
    defaults: dict[str, Any] = Field(default_factory=dict, description="The `retry` and `timeout` a step "
                                     "calling it gets unless it gives its own (part of the contract).")


class CapabilityResult(Envelope):
    capability: CapabilityOut | None = None


class CapabilitiesResult(Envelope):
    capabilities: list[CapabilityOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class CallResult(Envelope):
    ref: str
    outcome: str | None = None
    output: Any = None


RunStateName = Literal["running", "orphaned", "interrupted", "failed", "cancelled", "completed"]


class InterruptOut(BaseModel):
    id: str
    step: str
    kind: str
    request: Any = None
    outcomes: list[str] = Field(default_factory=list, description="Outcomes resume_run accepts.")
    resume_schema: dict[str, Any] | None = None


class RunOut(BaseModel):
    """The documented run object (its keys in the order of `wfops.api.RUN_KEYS`, as every face
    prints them), then `state`, which only this face adds; `interrupt` also says which
    outcomes answer it. A scheduled run's `slot` is read through `list_schedules`."""

    run_id: str
    deployment: str | None = None
    workflow: str
    artifact: str
    status: Literal["running", "completed", "failed", "interrupted", "cancelled"]
    outcome: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    interrupt: InterruptOut | None = None
    forked_from: dict[str, Any] | None = Field(None, description="{run_id, step, seq}: the run and step "
                                                                 "this run was forked from.")
    unlocked: bool = Field(False, description="A run of the working tree (`--unlocked`), not of the lock.")
    started_at: str | None = Field(None, description="When it was stored, UTC.")
    ended_at: str | None = Field(None, description="When it ended; null while running or interrupted.")
    duration_ms: int | None = Field(None, description="ended_at - started_at in milliseconds; null until it ends.")
    steps: int | None = Field(None, description="Trace entries committed.")
    orphaned: bool = Field(False, description="`running`, but no process drives it: resume_run continues it.")
    state: RunStateName = Field(description="status, told apart: `orphaned` is a `running` run no process drives.")


class ValueOut(BaseModel):
    """One page of a run's value as JSON text (`show_run` with `value`)."""

    pointer: str
    text: str = Field(description="This page of the value's JSON text.")
    offset: int
    total_chars: int
    next_offset: int | None = Field(None, description="Pass as offset for the next page; null at the end.")


class RunResult(Envelope):
    run: RunOut | None = None
    exit_code: int | None = Field(None, description="What `wfops run`/`resume` exits with for this run "
                                                    "(null while it is driven).")
    done: bool = Field(False, description="True once no process drives the run on (any state but running).")
    value: ValueOut | None = None


class ProjectWorkflowOut(BaseModel):
    name: str
    file: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    deployments: list[str] = Field(default_factory=list, description="Deployments that run it.")


class ProjectDeploymentOut(BaseModel):
    name: str
    file: str
    workflow: str
    bindings: dict[str, str] = Field(default_factory=dict)
    schedule: list[dict[str, Any]] = Field(default_factory=list, description="Its `schedule:` entries "
                                           "(cron, timezone, input, overlap, missed, window, enabled).")
    destructive: list[str] = Field(default_factory=list, description="Capabilities it calls that their source "
                                   "annotates destructive: running it acts for real.")


class ProjectSourceOut(BaseModel):
    id: str
    kind: str
    file: str
    detail: str = Field(description="The module, command or URL.")


class ProjectResult(Envelope):
    root: str = ""
    workflows: list[ProjectWorkflowOut] = Field(default_factory=list)
    deployments: list[ProjectDeploymentOut] = Field(default_factory=list)
    sources: list[ProjectSourceOut] = Field(default_factory=list)
    files: dict[str, list[str]] = Field(default_factory=dict, description="kind -> files read_file can read")
    broken: list[str] = Field(default_factory=list, description="Files that do not load (validate says why).")


class FileResult(Envelope):
    path: str
    kind: str | None = None
    text: str = ""
    start_line: int = 1
    end_line: int = 0
    total_lines: int = 0


class WriteResult(Envelope):
    path: str
    written: bool = False
    created: bool = False
    forced: bool = False
    unchanged: bool = False
    added: list[DiagnosticOut] = Field(default_factory=list, description="Errors the text would add.")
    diff: str = Field("", description="Unified diff of the file as it was against the text written or refused.")
    awaiting_approval: list[str] = Field(default_factory=list, description=(
        "Sources this client wrote that no tool starts or imports until a person approves them "
        "(`wfops sources approve ID` in the project)."))


class SkeletonResult(Envelope):
    name: str
    path: str | None = None
    capability: str | None = None
    text: str = ""
    written: bool = False


class ScheduleOut(BaseModel):
    deployment: str
    entry: str
    cron: str
    timezone: str
    enabled: bool
    overlap: str
    missed: str
    window: str
    next: list[dict[str, str]] = Field(default_factory=list, description="The next times, each {utc, local}.")
    last: dict[str, Any] | None = Field(None, description="The last slot started: {slot, run_id, status}.")


class SchedulesResult(Envelope):
    schedules: list[ScheduleOut] = Field(default_factory=list)


class RunsResult(Envelope):
    runs: list[RunOut] = Field(default_factory=list)


class TraceEntryOut(BaseModel):
    seq: int
    step: str
    kind: str
    attempt: int
    input: Any = None
    outcome: str | None = None
    output: Any = None
    state_changes: list[dict[str, Any]] = Field(default_factory=list)
    next: str | None = None
    error: dict[str, Any] | None = None
    started_at: str
    ended_at: str
    cached: bool = Field(False, description="Served from the step cache, without calling the capability.")
    cached_from: dict[str, Any] | None = Field(
        None, description="Where a cached step's result came from ({run_id, step, seq}) and the seconds the "
        "original call took (`saved`).")
    extra: dict[str, Any] | None = Field(None, description="What the capability returned beside its output "
                                         "(never saved to state).")
    logs: str | None = Field(None, description="What a python node printed and logged in this attempt "
                             "(its traceback when it failed), or its MCP tool sent as log notifications, "
                             "bounded and masked.")
    run_log: str | None = Field(None, description="Lines of the run's own log stored with this entry: log "
                                "notifications no one step is known to have sent (they came before it).")


class TraceResult(Envelope):
    run_id: str
    entries: list[TraceEntryOut] = Field(default_factory=list)
    next_from: int | None = Field(None, description="Pass as from_seq to read the next page.")


class CaseOut(BaseModel):
    name: str
    file: str
    line: int
    column: int
    workflow: str
    status: Literal["passed", "failed", "error"]
    message: str = ""
    diff: str = Field("", description="Unified diff of the expected keys against the actual values.")
    duration: float = Field(0.0, description="Seconds the case took.")
    expected: dict[str, Any] = Field(default_factory=dict, description="The keys the case expects, as written.")
    actual: dict[str, Any] = Field(default_factory=dict, description="The same keys as the run ended.")


class TestsResult(Envelope):
    __test__ = False  # not a pytest class

    passed: int = 0
    failed: int = 0
    errors: int = 0
    cases: list[CaseOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="e.g. that no test case was found.")


class SectionOut(BaseModel):
    page: str = Field(description="The page: read it whole as the resource wfops://docs/PAGE.")
    heading: str
    text: str
    uri: str


class DocsResult(Envelope):
    query: str = ""
    sections: list[SectionOut] = Field(default_factory=list)


class GraphResult(Envelope):
    workflow: str
    format: str
    text: str = ""


def run_out(run: Any, *, driven: bool | None = None) -> RunOut:
    """A `wfops.api.Run` as the tool result's run object. `driven`: whether a process drives it
    on, where the caller knows (a run a blocking call returned is driven no more)."""
    orphaned = run.status == "running" and (not driven if driven is not None else bool(run.orphaned))
    public = run.to_dict()
    # The values `runs show` adds (`show_run` pages them here: `value`), and a scheduled run's slot.
    for key in (*RUN_DETAIL_KEYS, "slot"):
        public.pop(key, None)
    public.update(orphaned=orphaned, state="orphaned" if orphaned else run.status)
    interrupt = run.interrupt
    if interrupt is not None:
        public["interrupt"] = InterruptOut(**interrupt.to_public(), outcomes=list(interrupt.outcomes),
                                           resume_schema=interrupt.resume_schema)
    return RunOut(**public)
