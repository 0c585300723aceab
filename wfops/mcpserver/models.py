"""What the `wfops mcp` tools return. Pydantic models, so each tool declares an output
schema and clients receive `structured_content` they can rely on.

Every result carries `ok`, `error` (a known failure: what and how to fix it),
`diagnostics` (findings, each with its file, line, column and hint) and `next_steps` (advice, next to the findings,
never instead of them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


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
    type: str = Field(description="e.g. RefusedError, UnknownRunError, Unavailable")
    message: str
    hint: str | None = None


class Envelope(BaseModel):
    ok: bool
    error: ErrorOut | None = None
    diagnostics: list[DiagnosticOut] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list, description="Suggested next tool calls.")


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


class CapabilitiesResult(Envelope):
    capabilities: list[CapabilityOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class CallResult(Envelope):
    ref: str
    outcome: str | None = None
    output: dict[str, Any] | None = None


class InterruptOut(BaseModel):
    id: str
    step: str
    kind: str
    request: Any = None
    outcomes: list[str] = Field(default_factory=list, description="Outcomes resume_run accepts.")
    resume_schema: dict[str, Any] | None = None


class RunOut(BaseModel):
    """The documented run object; `interrupt` also says which outcomes answer it."""

    run_id: str
    deployment: str | None = None
    workflow: str
    artifact: str
    status: Literal["running", "completed", "failed", "interrupted", "cancelled"]
    outcome: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    interrupt: InterruptOut | None = None


class RunResult(Envelope):
    run: RunOut | None = None
    exit_code: int | None = Field(None, description="What `wfops run`/`resume` would exit with.")


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


class TraceResult(Envelope):
    run_id: str
    entries: list[TraceEntryOut] = Field(default_factory=list)
    next_from: int | None = Field(None, description="Pass as from_seq to read the next page.")


class CaseOut(BaseModel):
    name: str
    file: str
    line: int
    workflow: str
    status: Literal["passed", "failed", "error"]
    message: str = ""
    diff: str = Field("", description="Unified diff of the expected keys against the actual values.")


class TestsResult(Envelope):
    __test__ = False  # not a pytest class

    passed: int = 0
    failed: int = 0
    errors: int = 0
    cases: list[CaseOut] = Field(default_factory=list)


class GraphResult(Envelope):
    workflow: str
    format: str
    text: str = ""


def run_out(run: Any) -> RunOut:
    """A `wfops.api.Run` as the tool result's run object."""
    public = run.to_dict()
    interrupt = run.interrupt
    if interrupt is not None:
        public["interrupt"] = InterruptOut(**interrupt.to_public(), outcomes=list(interrupt.outcomes),
                                           resume_schema=interrupt.resume_schema)
    return RunOut(**public)
