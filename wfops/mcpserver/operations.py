"""One plain, synchronous function per `wfops mcp` tool: call the core API, shape the result.

They raise `WfopsError` for known failures; `app.py` turns those into results. They
run in worker threads: the API drives its own event loop for compile, checks and runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from wfops.api import docs
from wfops.api.approvals import SourcesAwaitApproval
from wfops.api.authoring import secret_inputs
from wfops.api.blockers import missing_secrets
from wfops.errors import InvalidArgument, RefusedError, WfopsError
from wfops.mcpserver import advice, bounded
from wfops.mcpserver.models import (
    CallResult,
    CapabilitiesResult,
    CapabilityOut,
    CapabilityResult,
    CaseOut,
    CheckResult,
    CompileResult,
    DiagnosticOut,
    DocsResult,
    ErrorOut,
    FileResult,
    GraphResult,
    NextAction,
    ProjectDeploymentOut,
    ProjectResult,
    ProjectSourceOut,
    ProjectWorkflowOut,
    RunOut,
    RunResult,
    RunsResult,
    ScheduleOut,
    SchedulesResult,
    SectionOut,
    SkeletonResult,
    TestsResult,
    TraceEntryOut,
    TraceResult,
    ValidateResult,
    ValueOut,
    WriteResult,
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
    found = [*report.diagnostics, *(missing_secrets(project.root) if not paths else [])]
    return ValidateResult(ok=report.ok, diagnostics=_diagnostics(found), checked=report.checked,
                          next_actions=advice.after_validate(report.diagnostics, runnable(project),
                                                             report.ok and lock_stale(project)))


def lock_stale(project: Project) -> bool:
    """Whether `check` would fail on the lock (so compile is the next step, not a run)."""
    return any(d.is_error and d.code in advice.LOCK_CODES for d in project.check().diagnostics)


def validate_text(project: Project, text: str, kind: str | None, path: str | None) -> ValidateResult:
    report = project.validate(text=text, kind=kind, path=path)
    steps = [a for a in advice.after_validate(report.diagnostics, runnable(project), False)
             if a.tool != "start_run"]  # the text is not saved: no run sees it yet
    for action in steps:
        if action.tool == "validate" and not action.arguments:  # validate {} would check the files, not the text
            action.arguments = {"text": "<the fixed text>", "kind": kind, **({"path": path} if path else {})}
    if report.ok:
        target = path or _file_for(kind, text)
        steps.insert(0, advice.act("write_file", f"save the text as {target}", path=target, text=text))
    return ValidateResult(ok=report.ok, diagnostics=_diagnostics(report.diagnostics), checked=report.checked,
                          static_checks=report.static_checks, next_actions=steps)


def _file_for(kind: str | None, text: str) -> str:
    """Where unsaved text of `kind` is saved: the file its own name gives."""
    key = "workflow" if kind == "wftest" else "name"
    found = re.search(rf"^{key}:\s*['\"]?([A-Za-z0-9_.-]+)", text, flags=re.MULTILINE)
    name = found.group(1) if found else "new"
    return {"sources": "sources.yaml", "wftest": f"tests/{name}.wftest.yaml"}.get(str(kind), f"{kind}s/{name}.yaml")


def compile_lock(project: Project) -> CompileResult:
    report = project.compile()
    if not report.written:
        return CompileResult(ok=False, diagnostics=_diagnostics(report.diagnostics),
                             next_actions=advice.after_validate(report.diagnostics, runnable(project, report.deployments), False))
    return CompileResult(ok=True, lock=report.lock, changed=report.changed, changes=report.changes,
                         workflows=report.workflows, diagnostics=_diagnostics(report.diagnostics),
                         next_actions=advice.after_compile(runnable(project, report.deployments)))


def run_tests(project: Project, paths: list[str], pattern: str | None) -> TestsResult:
    """As `wfops test PATHS -k PATTERN`, with paths relative to the project root."""
    report = project.test(paths, pattern)
    cases = [CaseOut(**c.to_dict()) for c in report.cases]
    if not report.cases and report.ok:
        return _no_tests(project, paths, report)
    steps = ([] if report.ok else
             [advice.act("run_tests", "fix the test files (see diagnostics), then run the tests again")]
             if report.invalid else
             [advice.act("run_tests", "read each failed case's diff; fix the workflow or the test, "
                                      "then run the tests again")])
    return TestsResult(ok=report.ok, diagnostics=_diagnostics(report.diagnostics), passed=report.count("passed"),
                       failed=report.count("failed"), errors=report.count("error"), cases=cases, next_actions=steps)


def _no_tests(project: Project, paths: list[str], report: Any) -> TestsResult:
    """Zero cases is not a pass: say so, and how to write the first test."""
    where = ", ".join(paths) if paths else "tests/"
    workflows = [w.name for w in project.list_project().workflows][:3]
    steps = [advice.act("new_test", f"a test file for {name} to start from (one case per outcome, mocks from "
                                    "the contracts)", workflow=name) for name in workflows]
    steps.append(advice.act("write_file", "or write one yourself: tests/NAME.wftest.yaml (schema: resource "
                                          "wfops://schemas/wftest)", path="tests/NAME.wftest.yaml",
                            text=TEST_TEMPLATE))
    return TestsResult(ok=True, diagnostics=_diagnostics(report.diagnostics), next_actions=steps,
                       notes=[f"no test case was found under {where}: nothing was tested (test files are "
                              "tests/**/*.wftest.yaml)"])


#: The smallest test file, for an agent that writes its own (the `<...>` parts are its to fill).
TEST_TEMPLATE = """workflow: <workflow name>
cases:
  - name: <what this case shows>
    input: {}
    mocks: {}
    expect: {status: completed}
"""


def new_test(project: Project, workflow: str, write: bool) -> SkeletonResult:
    made = project.new_test(workflow, write=write)
    written = made.written is not None and made.written.written
    found = made.written.diagnostics if made.written is not None else made.diagnostics
    steps = [advice.act("run_tests", "see what each case does now, then write it down in its expect",
                        paths=[made.path])] if written else \
        [advice.act("write_file", "save it (or call new_test with write=true)", path=made.path, text=made.text)]
    return SkeletonResult(ok=not any(d.is_error for d in found), name=workflow, path=made.path, text=made.text,
                          written=written, diagnostics=_diagnostics([d for d in found if d.file == made.path]),
                          next_actions=steps)


def check(project: Project, live: bool) -> CheckResult:
    report = project.check(live=live)
    return CheckResult(ok=report.ok, live=live, diagnostics=_diagnostics(report.diagnostics),
                       next_actions=advice.after_check(report.diagnostics, runnable(project)))


def capabilities(project: Project, source: str | None) -> CapabilitiesResult:
    listing = project.capabilities(source)
    steps = [advice.act("describe_capability", "its schemas, outcomes and docs", ref=c.ref)
             for c in listing.capabilities[:3]]
    for note in listing.notes:
        steps.insert(0, advice.act("list_capabilities", "start the MCP source and list every tool "
                                   "(wfops.lock holds only the tools workflows use)", source=note.partition(":")[0]))
    return CapabilitiesResult(ok=listing.ok, capabilities=[_capability(c) for c in listing.capabilities],
                              notes=listing.notes, diagnostics=_diagnostics(listing.diagnostics),
                              next_actions=steps)


def _capability(info: Any) -> CapabilityOut:
    return CapabilityOut(**info.to_dict())


def describe_capability(project: Project, ref: str) -> CapabilityResult:
    info = project.capability(ref)
    secrets = secret_inputs(info.input_schema)
    example = {key: f"<{key}>" for key in (info.input_schema.get("required") or [])}
    hints = dict(info.annotations)
    warn = (" - WARNING: it is annotated destructive (destructiveHint): the call really acts, e.g. deletes "
            "or sends" if hints.get("destructiveHint") and not hints.get("readOnlyHint") else "")
    steps = [advice.act("call_capability", f"try it on its own (fill in the input){warn}", ref=ref, input=example),
             advice.act("new_workflow", "a workflow that calls it" + (" (its secrets bound as $secret.NAME)"
                                                                     if secrets else ""),
                        capability=ref, name=info.name.replace("_", "-"))]
    notes = advice.as_text(steps)
    if secrets:
        notes.insert(0, advice.secrets_note(secrets))
    return CapabilityResult(ok=True, capability=_capability(info), next_actions=steps, next_steps=notes)


def call_capability(project: Project, ref: str, payload: Any, timeout: float | None = None,
                    on_ready: Callable[[], None] | None = None) -> CallResult:
    done = project.call(ref, payload, timeout=timeout, on_ready=on_ready)
    return CallResult(ok=True, ref=ref, outcome=done.outcome, output=done.output, next_actions=[
        advice.act("new_workflow", f"a workflow whose step `uses: {ref}`", capability=ref,
                   name=ref.partition(".")[2].replace("_", "-") or "flow")])


def every_blocker(project: Project, deployment: str, exc: RefusedError) -> RefusedError:
    """A refused run's error with every blocker in its findings, not only the first the run met:
    the project's errors, the lock's, and the secrets the server's environment lacks."""
    if isinstance(exc, SourcesAwaitApproval):
        return exc
    found = list(exc.diagnostics)
    try:
        found += [d for d in project.validate().diagnostics if d.is_error]
        found += [d for d in project.check().diagnostics if d.is_error]
    except WfopsError:
        pass  # the refusal's own findings still stand
    secrets = [d.replace(severity="error") for d in missing_secrets(project.root, deployment)]
    seen: set[tuple[str, str, str]] = set()
    every = []
    for d in [*found, *secrets]:
        if (d.code, d.file, d.message) not in seen:
            seen.add((d.code, d.file, d.message))
            every.append(d)
    hint = secrets[0].hint if secrets else exc.hint  # for the MCP client, not the CLI's `export`
    refused = RefusedError(exc.message, hint=hint, diagnostics=every)
    refused.run_id = exc.run_id
    return refused


def secret_hint(exc: RefusedError) -> RefusedError:
    """A refusal for a missing secret, its hint for an MCP client (the CLI's says `export`)."""
    if "is not set in the environment" not in exc.message or not exc.message.startswith("secret "):
        return exc
    refused = RefusedError(exc.message, diagnostics=exc.diagnostics, hint=(
        "set it in the `env` of this client's wfops server entry and restart the server (secrets are read "
        "from the server's environment, never stored)"))
    refused.run_id = exc.run_id
    return refused


def run_result(run: RunOut, **extra: Any) -> RunResult:
    """Every run result: `ok`, `done`, `exit_code` and the advice all from the run-state table."""
    row = advice.STATES[run.state]
    extra.setdefault("next_actions", row.advise(run))
    return RunResult(ok=row.ok, run=run, done=row.done, exit_code=row.exit_code, **extra)


def run_deployment(project: Project, deployment: str, run_input: dict[str, Any],
                   on_step: OnStep | None = None, on_start: Callable[[str], None] | None = None) -> RunResult:
    try:
        return _run_result(project.run(deployment, run_input, on_step=on_step, on_start=on_start))
    except RefusedError as exc:
        raise every_blocker(project, deployment, exc) from None


def cancel_run(project: Project, run_id: str) -> RunResult:
    """Stop a run: at once when nobody drives it, else at its driver's next step boundary
    (wait_run then reports `cancelled`). Its state is kept: resume_run continues it."""
    run = run_out(project.cancel(run_id))
    if run.state != "running":
        return run_result(run)
    return run_result(run, next_actions=[
        advice.act("wait_run", "its driver stops it at the next step boundary; wait for `cancelled`",
                   run_id=run_id, timeout=advice.WAIT)])


def _run_result(result: Run) -> RunResult:
    """A run a blocking call returned: no process drives it on."""
    return run_result(run_out(result, driven=False), diagnostics=_diagnostics(result.warnings))


def refused_resume(project: Project, run_id: str) -> list[NextAction]:
    """The advice when a resume is refused without findings: what the run's state says."""
    try:
        run = run_out(project.get_run(run_id))
        first = project.trace(run_id, limit=1)
    except WfopsError:
        return [advice.act("list_runs", "see the stored runs and their run_id")]
    return advice.after_refused_resume(run, first[0].step if first else None)


def show_run(project: Project, run_id: str, value: str | None = None, offset: int = 0,
             max_chars: int = bounded.DEFAULT_MAX_CHARS) -> RunResult:
    run = run_out(project.get_run(run_id))
    if value is None:
        return run_result(run)
    text = json.dumps(project.run_value(run_id, value), ensure_ascii=False, sort_keys=True)
    if offset < 0 or offset > len(text):
        raise InvalidArgument(f"offset {offset} is outside the value ({len(text)} characters)", argument="offset")
    chunk, next_offset = bounded.page(text, offset, max_chars)
    steps = advice.after_run(run)
    if next_offset is not None:
        steps = [advice.act("show_run", "the next page of the value", run_id=run_id, value=value,
                            offset=next_offset, max_chars=max_chars)]
    result = run_result(run, next_actions=steps, value=ValueOut(
        pointer=value, text=chunk, offset=offset, total_chars=len(text), next_offset=next_offset))
    result.run = None  # the page is the answer: the run object would only crowd it
    return result


def list_runs(project: Project, deployment: str | None, status: str | None, limit: int) -> RunsResult:
    runs = [run_out(r) for r in project.runs(deployment=deployment, status=status, limit=max(1, min(limit, 200)))]
    steps = [advice.act("show_run", "the newest run", run_id=runs[0].run_id)] if runs else \
        [advice.act("list_project", "find a deployment to start_run")]
    return RunsResult(ok=True, runs=runs, next_actions=steps)


def list_schedules(project: Project, deployment: str | None, count: int) -> SchedulesResult:
    found = [ScheduleOut(**entry.to_dict()) for entry in project.schedules(deployment, count=count)]
    steps = [advice.act("list_runs", "the runs of a scheduled deployment", deployment=found[0].deployment)] \
        if found else [advice.act("list_project", "the deployments, to add a `schedule:` to one")]
    return SchedulesResult(ok=True, schedules=found, next_actions=steps)


def read_trace(project: Project, run_id: str, from_seq: int | None, limit: int | None) -> TraceResult:
    page = max(1, min(limit or 100, MAX_TRACE_PAGE))
    entries = project.trace(run_id, from_seq=from_seq, limit=page)
    seqs = {e.seq for e in entries}
    logs = {log.seq: log.text for log in project.step_logs(run_id) if abs(log.seq) in seqs or log.seq == 0} \
        if entries else {}
    first = entries[0].seq if entries else None  # the run log from before any entry goes with entry #1

    def run_log(seq: int) -> str | None:
        parts = [text for text in (logs.get(0) if seq == first == 1 else None, logs.get(-seq)) if text]
        return "".join(parts) or None

    out = [TraceEntryOut(**e.to_dict(), logs=logs.get(e.seq), run_log=run_log(e.seq)) for e in entries]
    more = len(out) == page
    next_from = out[-1].seq + 1 if more else None
    steps = [advice.act("read_trace", "the next page", run_id=run_id, from_seq=next_from, limit=page)] if more \
        else [advice.act("show_run", "the run's status and output", run_id=run_id)]
    return TraceResult(ok=True, run_id=run_id, entries=out, next_from=next_from, next_actions=steps)


def search_docs(query: str, limit: int) -> DocsResult:
    found = docs.search(query, limit)
    steps = [] if found or len(query.split()) < 2 else [
        advice.act("search_docs", "fewer words", query=query.split()[0])]
    return DocsResult(ok=True, query=query, next_actions=steps, sections=[
        SectionOut(page=s.page, heading=s.heading, text=s.text, uri=f"wfops://docs/{s.page}") for s in found])


def draw_graph(project: Project, workflow: str, format: str) -> GraphResult:  # noqa: A002
    text = project.graph(workflow, format)
    return GraphResult(ok=True, workflow=workflow, format=format, text=text,
                       next_actions=[advice.act("list_project", f"find {workflow}'s file to read or patch it")])


# -- authoring -----------------------------------------------------------------------------------

def runnable(project: Project, names: list[str] | None = None) -> dict[str, list[str]]:
    """The deployments (or those of `names`) -> the capabilities each calls that their source
    annotates destructive (from wfops.lock), for the warnings of the runs advised."""
    found = {d.name: d.destructive for d in project.list_project().deployments}
    return found if names is None else {name: found.get(name, []) for name in names}


def list_project(project: Project) -> ProjectResult:
    listing = project.list_project()
    # Reading comes first: a run acts on the world, and nothing has been read or changed yet.
    steps = [advice.act("read_file", "read the workflow", path=w.file) for w in listing.workflows[:2]]
    if listing.workflows:
        steps.append(advice.act("validate", "the project's findings, before any change"))
    if not listing.workflows:
        steps.insert(0, advice.act("list_capabilities", "what a new workflow can call"))
    if listing.broken:
        steps.insert(0, advice.act("validate", "some files do not load: see why", paths=listing.broken))
    return ProjectResult(
        ok=True, root=listing.root,
        workflows=[ProjectWorkflowOut(**asdict(w)) for w in listing.workflows],
        deployments=[ProjectDeploymentOut(**asdict(d)) for d in listing.deployments],
        sources=[ProjectSourceOut(**asdict(s)) for s in listing.sources],
        files=listing.files, broken=listing.broken, next_actions=steps)


def read_file(project: Project, path: str, line_numbers: bool, start_line: int | None,
              end_line: int | None) -> FileResult:
    got = project.read_file(path, start_line, end_line)
    text = got.text
    if line_numbers:
        width = len(str(max(got.end_line, 1)))
        text = "".join(f"{n:>{width}}| {line}" for n, line in
                       enumerate(got.text.splitlines(keepends=True), start=got.start_line))
    steps = []
    if got.kind in ("workflow", "deployment", "sources", "test"):
        # Callable as given: an empty patch changes nothing; fill in its ops (a placeholder text
        # for write_file would be written as it stands, so none is offered).
        steps = [advice.act("patch_workflow", "a focused edit: fill in the RFC 6902 ops (comments are kept; "
                                              "or write_file the whole new text)", path=got.path, patch=[])]
    return FileResult(ok=True, path=got.path, kind=got.kind, text=text, start_line=got.start_line,
                      end_line=got.end_line, total_lines=got.total_lines, next_actions=steps)


def write_file(project: Project, path: str, text: str, force: bool) -> WriteResult:
    return _write_result(project, project.write_file(path, text, force=force))


def patch_workflow(project: Project, path: str, patch: Any) -> WriteResult:
    return _write_result(project, project.patch_file(path, patch))


def _write_result(project: Project, report: Any) -> WriteResult:
    """A write or patch: what changed is the diff (read_file shows the whole file)."""
    done = report.written or report.unchanged
    steps = advice.after_write(report.diagnostics, done, report.path, runnable(project),
                               done and not report.added and lock_stale(project))
    if not report.written and report.added:
        steps.append(advice.act("write_file", "write it anyway, errors and all (force)", path=report.path,
                                text=report.text, force=True))
    refused = None
    if not report.written and report.added:
        count = len(report.added)
        refused = ErrorOut(type="WriteRefused", message=f"{report.path} was not written: the text would add "
                                                        f"{count} error{'s' if count > 1 else ''} to the project "
                                                        "(see `added`); the file is untouched",
                           hint="fix what each diagnostic's hint says and call again (or force: true to "
                                "write it anyway)")
    notes = advice.as_text(steps)
    if report.awaiting_approval:
        notes.insert(0, advice.awaiting_approval(report.awaiting_approval))
    return WriteResult(ok=not report.added or report.written, error=refused, path=report.path,
                       written=report.written,
                       created=report.created, forced=report.forced, unchanged=report.unchanged,
                       added=_diagnostics(report.added), diagnostics=_diagnostics(report.diagnostics),
                       awaiting_approval=report.awaiting_approval,
                       diff=report.diff,
                       next_actions=steps, next_steps=notes)


def new_workflow(project: Project, capability: str, name: str, write: bool) -> SkeletonResult:
    made = project.new_workflow(capability, name, write=write)
    written = made.written is not None and made.written.written
    steps = [advice.act("write_file", "save it (or call new_workflow with write=true)", path=made.path,
                        text=made.text)] if not write else \
        [advice.act("read_file", "see it", path=made.path),
         advice.act("compile", "snapshot capability contracts and write wfops.lock")]
    secrets = dict(re.findall(r'"([^"]+)": \$secret\.(\w+)', made.text))  # as the skeleton binds them
    notes = advice.as_text(steps)
    if secrets:
        names = sorted(set(secrets.values()))
        deployment = (f"name: {name}.local\nworkflow: {name}\nsecrets: [{', '.join(names)}]  "
                      "# read from the environment of the process that runs wfops, never stored\n")
        steps.append(advice.act("write_file", f"a deployment that lists the secrets {', '.join(names)} the "
                                              "workflow reads", path=f"deployments/{name}.yaml", text=deployment))
        notes = [advice.secrets_note(secrets), *advice.as_text(steps)]
    found = made.written.diagnostics if made.written is not None else made.diagnostics
    return SkeletonResult(ok=not any(d.is_error for d in found), name=made.name, path=made.path,
                          capability=made.capability, text=made.text, written=written,
                          diagnostics=_diagnostics([d for d in found if d.file == made.path]), next_actions=steps,
                          next_steps=notes)
