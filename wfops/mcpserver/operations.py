"""One plain, synchronous function per `wfops mcp` tool: call the core API, shape the result.

They raise `WfopsError` for known failures; `app.py` turns those into results. They
run in worker threads: the API drives its own event loop for compile, checks and runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wfops.cli.exits import for_run
from wfops.mcpserver import advice
from wfops.mcpserver.models import (
    CallResult,
    CapabilitiesResult,
    CapabilityOut,
    CaseOut,
    CheckResult,
    CompileResult,
    DiagnosticOut,
    GraphResult,
    RunResult,
    RunsResult,
    TestsResult,
    TraceEntryOut,
    TraceResult,
    ValidateResult,
    run_out,
)

if TYPE_CHECKING:
    from wfops.api import Project, Run
    from wfops.diagnostics import Diagnostic

MAX_TRACE_PAGE = 500
OnStep = Callable[[Any], None]  # called with each committed TraceEntry


def _diagnostics(found: list[Diagnostic]) -> list[DiagnosticOut]:
    return [DiagnosticOut.of(d) for d in found]


def validate_files(project: Project, paths: list[str]) -> ValidateResult:
    """As `wfops validate PATHS`, with paths relative to the project root (and inside it)."""
    report = project.validate(paths)
    return ValidateResult(ok=report.ok, diagnostics=_diagnostics(report.diagnostics), checked=report.checked,
                          next_steps=advice.after_validate(report.diagnostics, project.deployments()))


def validate_text(project: Project, text: str, kind: str | None, path: str | None) -> ValidateResult:
    report = project.validate(text=text, kind=kind, path=path)
    steps = advice.after_validate(report.diagnostics, project.deployments())
    if report.ok:
        target = path or ("sources.yaml" if kind == "sources" else f"{kind}s/<name>.yaml")
        steps.insert(0, f"save the text as {target}")
    if not report.static_checks and report.ok:
        steps.insert(0, "validate the project once the file is saved (only syntax and schema were checked)")
    return ValidateResult(ok=report.ok, diagnostics=_diagnostics(report.diagnostics), checked=report.checked,
                          static_checks=report.static_checks, next_steps=steps)


def compile_lock(project: Project) -> CompileResult:
    report = project.compile()
    if not report.written:
        return CompileResult(ok=False, diagnostics=_diagnostics(report.diagnostics),
                             next_steps=advice.after_validate(report.diagnostics, report.deployments))
    return CompileResult(ok=True, lock=report.lock, changed=report.changed, changes=report.changes,
                         workflows=report.workflows, diagnostics=_diagnostics(report.diagnostics),
                         next_steps=advice.after_compile(report.deployments))


def run_tests(project: Project, paths: list[str], pattern: str | None) -> TestsResult:
    """As `wfops test PATHS -k PATTERN`, with paths relative to the project root."""
    report = project.test(paths, pattern)
    cases = [CaseOut(name=c.name, file=c.file, line=c.line, workflow=c.workflow, status=c.status,
                     message=c.message, diff=c.diff) for c in report.cases]
    steps = ([] if report.ok else
             ["fix the test files (diagnostics) and run_tests again"] if report.invalid else
             ["read each failed case's diff; fix the workflow or the test, then run_tests again"])
    return TestsResult(ok=report.ok, diagnostics=_diagnostics(report.diagnostics), passed=report.count("passed"),
                       failed=report.count("failed"), errors=report.count("error"), cases=cases, next_steps=steps)


def check(project: Project, live: bool) -> CheckResult:
    report = project.check(live=live)
    return CheckResult(ok=report.ok, live=live, diagnostics=_diagnostics(report.diagnostics),
                       next_steps=advice.after_check(report.diagnostics, project.deployments()))


def capabilities(project: Project, source: str | None) -> CapabilitiesResult:
    listing = project.capabilities(source)
    steps = ["use a capability in a workflow step as `uses: <source>.<name>` and validate"]
    if listing.notes:
        steps.insert(0, "list_capabilities with source=<an MCP source id> to start it and list every "
                        "tool (wfops.lock holds only the tools workflows use)")
    return CapabilitiesResult(ok=listing.ok, capabilities=[CapabilityOut(**c.to_dict())
                                                           for c in listing.capabilities],
                              notes=listing.notes, diagnostics=_diagnostics(listing.diagnostics), next_steps=steps)


def call_capability(project: Project, ref: str, payload: Any) -> CallResult:
    done = project.call(ref, payload)
    return CallResult(ok=True, ref=ref, outcome=done.outcome, output=done.output,
                      next_steps=[f"use it in a workflow step as `uses: {ref}` (bound through a deployment)"])


def run_deployment(project: Project, deployment: str, run_input: dict[str, Any],
                   on_step: OnStep | None = None) -> RunResult:
    return _run_result(project.run(deployment, run_input, on_step=on_step))


def resume_run(project: Project, run_id: str, outcome: str | None, payload: Any,
               on_step: OnStep | None = None) -> RunResult:
    return _run_result(project.resume(run_id, outcome, payload, on_step=on_step))


def _run_result(result: Run) -> RunResult:
    run = run_out(result)
    return RunResult(ok=run.status in ("completed", "interrupted"), run=run, exit_code=for_run(run.status),
                     diagnostics=_diagnostics(result.warnings), next_steps=advice.after_run(run))


def show_run(project: Project, run_id: str) -> RunResult:
    run = run_out(project.get_run(run_id))
    return RunResult(ok=run.status != "failed", run=run, exit_code=for_run(run.status),
                     next_steps=advice.after_run(run))


def list_runs(project: Project, deployment: str | None, status: str | None, limit: int) -> RunsResult:
    runs = [run_out(r) for r in project.runs(deployment=deployment, status=status, limit=max(1, min(limit, 200)))]
    steps = [f"show_run with run_id={runs[0].run_id!r}"] if runs else ["run_deployment to start a run"]
    return RunsResult(ok=True, runs=runs, next_steps=steps)


def read_trace(project: Project, run_id: str, from_seq: int | None, limit: int | None) -> TraceResult:
    page = max(1, min(limit or 100, MAX_TRACE_PAGE))
    out = [TraceEntryOut(**e.to_dict()) for e in project.trace(run_id, from_seq=from_seq, limit=page)]
    more = len(out) == page
    next_from = out[-1].seq + 1 if more else None
    steps = [f"read_trace with run_id={run_id!r} and from_seq={next_from}"] if more else \
        [f"show_run with run_id={run_id!r} for the run's status and output"]
    return TraceResult(ok=True, run_id=run_id, entries=out, next_from=next_from, next_steps=steps)


def draw_graph(project: Project, workflow: str, format: str) -> GraphResult:  # noqa: A002
    text = project.graph(workflow, format)
    return GraphResult(ok=True, workflow=workflow, format=format, text=text,
                       next_steps=[f"validate the workflow's file (workflows/) after editing {workflow}"])
