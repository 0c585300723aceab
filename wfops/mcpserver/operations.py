"""One plain, synchronous function per `wfops mcp` tool.

Each calls what the matching CLI verb calls (validate_project, wfops.lock, the
runner, the store, the graph renderer) and returns a result model. They raise
`WfopsError` for known failures; `app.py` turns those into results. They run in
worker threads: some (compile, live checks, runs) drive their own event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wfops.errors import UnknownRunError, UsageError
from wfops.mcpserver import advice
from wfops.mcpserver.models import (
    CapabilitiesResult,
    CapabilityOut,
    CheckResult,
    CompileResult,
    DiagnosticOut,
    GraphResult,
    RunResult,
    RunsResult,
    TraceEntryOut,
    TraceResult,
    ValidateResult,
    run_out,
)

MAX_TRACE_PAGE = 500
OnStep = Callable[[Any], None]  # called with each committed TraceEntry


@dataclass(frozen=True)
class ServerOptions:
    root: Path
    db: str | None = None


def _diagnostics(found: Any) -> list[DiagnosticOut]:
    return [DiagnosticOut.of(d) for d in found]


def _fresh(root: Path) -> None:
    """Forget project modules, so edits to python sources count (the server lives long)."""
    from wfops.sources.python import forget_project_modules

    forget_project_modules(root)


def validate_files(opts: ServerOptions, paths: list[str]) -> ValidateResult:
    """As `wfops validate PATHS`: the same selection (files, folders, a python source reported
    at sources.yaml, a missing path is `file-missing`), with paths relative to the project root."""
    from wfops.cli.validate_cmd import select
    from wfops.compiler.standalone import validate_file
    from wfops.compiler.validate import validate_project

    bad = [p for p in paths if "\0" in p]
    if bad:
        raise UsageError(f"path {bad[0]!r} contains a NUL byte", hint="give project-relative file or folder paths")
    _fresh(opts.root)
    validation = validate_project(opts.root)
    root = opts.root.resolve()
    selection = select(root, [str(root / p) for p in paths])
    # Findings name files as the client gave them (project-relative), not as absolute paths.
    found = [_as_given(d, root) for d in selection.missing]
    if selection.everything or selection.files or selection.folders:
        found += [d for d in validation.diagnostics if selection.wants(d)]
    for path, shown, quiet in selection.standalone:
        found += validate_file(path, shown, quiet_unknown=quiet)
    checked = sorted({_project_relative(opts.root, p) for p in paths}) or ["(whole project)"]
    return ValidateResult(ok=not any(d.is_error for d in found), diagnostics=_diagnostics(found),
                          checked=checked,
                          next_steps=advice.after_validate(found, sorted(validation.project.deployments)))


def _as_given(diagnostic: Any, root: Path) -> Any:
    from dataclasses import replace

    shown = _project_relative(root, diagnostic.file)
    return replace(diagnostic, file=shown, message=diagnostic.message.replace(diagnostic.file, shown))


def validate_text(opts: ServerOptions, text: str, kind: str, path: str | None) -> ValidateResult:
    from wfops.mcpserver.inline import KINDS, validate_text

    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}", hint="kind is one of: " + ", ".join(KINDS))
    _fresh(opts.root)
    report = validate_text(opts.root, text, kind, _project_relative(opts.root, path) if path else None)  # type: ignore[arg-type]
    ok = not any(d.is_error for d in report.diagnostics)
    steps = advice.after_validate(report.diagnostics, report.deployments)
    if ok:
        target = path or ("sources.yaml" if kind == "sources" else f"{kind}s/<name>.yaml")
        steps.insert(0, f"save the text as {target}")
    if not report.static_checks and ok:
        steps.insert(0, "validate the project once the file is saved (only syntax and schema were checked)")
    return ValidateResult(ok=ok, diagnostics=_diagnostics(report.diagnostics), checked=[report.file],
                          static_checks=report.static_checks, next_steps=steps)


def compile_lock(opts: ServerOptions) -> CompileResult:
    from wfops.compiler.validate import validate_project
    from wfops.errors import WfopsError
    from wfops.lock.build import compile_project
    from wfops.lock.drift import EVERYTHING, pin_mismatches
    from wfops.lock.lockfile import read_lock, write_lock
    from wfops.lock.summary import lock_changes

    _fresh(opts.root)
    validation = validate_project(opts.root, live=True)  # as `wfops compile`: MCP contracts are snapshotted
    deployments = sorted(validation.project.deployments)
    if not validation.ok:
        return CompileResult(ok=False, diagnostics=_diagnostics(validation.diagnostics),
                             next_steps=advice.after_validate(validation.diagnostics, deployments))
    compiled = compile_project(validation)
    refused = pin_mismatches(validation, compiled, EVERYTHING)  # as `wfops compile`: no lock check would fail
    if refused:
        return CompileResult(ok=False, diagnostics=_diagnostics(refused),
                             next_steps=advice.after_validate(refused, deployments))
    lock = compiled.to_lock()
    try:
        previous = read_lock(opts.root)
    except WfopsError:
        previous = None  # a corrupt lock is exactly what compile repairs
    write_lock(opts.root, lock)
    changes = lock_changes(previous, lock) if previous != lock else []
    kept = [d for d in validation.diagnostics if not d.is_error] + list(compiled.diagnostics)
    return CompileResult(ok=True, lock="wfops.lock", changed=bool(changes), changes=changes,
                         workflows={n: e["hash"] for n, e in compiled.workflows.items()},
                         diagnostics=_diagnostics(kept), next_steps=advice.after_compile(deployments))


def check(opts: ServerOptions, live: bool) -> CheckResult:
    from wfops.loader.project import load_project
    from wfops.lock.check import check_project

    _fresh(opts.root)
    found = check_project(opts.root, live=live)
    deployments = sorted(load_project(opts.root).deployments)
    return CheckResult(ok=not any(d.is_error for d in found), live=live, diagnostics=_diagnostics(found),
                       next_steps=advice.after_check(found, deployments))


def capabilities(opts: ServerOptions, source: str | None) -> CapabilitiesResult:
    from wfops.loader.project import SOURCES_FILE
    from wfops.sources.catalog import load_catalog

    _fresh(opts.root)
    catalog = load_catalog(opts.root)
    entries, notes = catalog.entries(source)
    caps = [CapabilityOut(**entry.to_dict(schemas=True)) for entry in entries]
    steps = ["use a capability in a workflow step as `uses: <source>.<name>` and validate"]
    if notes:
        steps.insert(0, "list_capabilities with source=<an MCP source id> to start it and list every "
                        "tool (wfops.lock holds only the tools workflows use)")
    # Only findings about the sources matter here; `validate` reports the workflows.
    found = [d for d in catalog.diagnostics if d.file == SOURCES_FILE]
    return CapabilitiesResult(ok=not any(d.is_error for d in found), capabilities=caps, notes=notes,
                              diagnostics=_diagnostics(found), next_steps=steps)


def run_deployment(opts: ServerOptions, deployment: str, run_input: dict[str, Any],
                   on_step: OnStep | None = None) -> RunResult:
    from wfops.runner import RunOptions
    from wfops.runner import run_deployment as start

    _fresh(opts.root)
    result = asyncio.run(start(RunOptions(deployment, input=run_input, project=opts.root, db=opts.db,
                                          on_step=on_step)))
    return _run_result(result)


def resume_run(opts: ServerOptions, run_id: str, outcome: str | None, payload: Any,
               on_step: OnStep | None = None) -> RunResult:
    from wfops.runner import ResumeOptions
    from wfops.runner import resume_run as resume

    _fresh(opts.root)
    result = asyncio.run(resume(ResumeOptions(run_id, outcome=outcome, payload=payload,
                                              project=opts.root, db=opts.db, on_step=on_step)))
    return _run_result(result)


def _run_result(result: Any) -> RunResult:
    run = run_out(result.snapshot)
    return RunResult(ok=run.status in ("completed", "interrupted"), run=run, exit_code=result.exit_code,
                     diagnostics=_diagnostics(result.warnings), next_steps=advice.after_run(run))


def show_run(opts: ServerOptions, run_id: str) -> RunResult:
    with _store(opts, run_id) as store:
        run = run_out(store.get_run(run_id).snapshot)
    from wfops.runner import EXIT_CODES

    return RunResult(ok=run.status != "failed", run=run, exit_code=EXIT_CODES.get(run.status),
                     next_steps=advice.after_run(run))


def list_runs(opts: ServerOptions, deployment: str | None, status: str | None, limit: int) -> RunsResult:
    path = _store_path(opts)
    if not path.exists():
        return RunsResult(ok=True, runs=[], next_steps=["run_deployment to start a first run"])
    with _store(opts, None) as store:
        records = store.list_runs(deployment=deployment, status=status, limit=max(1, min(limit, 200)))
    runs = [run_out(r.snapshot) for r in records]
    steps = [f"show_run with run_id={runs[0].run_id!r}"] if runs else ["run_deployment to start a run"]
    return RunsResult(ok=True, runs=runs, next_steps=steps)


def read_trace(opts: ServerOptions, run_id: str, from_seq: int | None, limit: int | None) -> TraceResult:
    page = max(1, min(limit or 100, MAX_TRACE_PAGE))
    with _store(opts, run_id) as store:
        store.get_run(run_id)  # an unknown id is an error, not an empty trace
        entries = store.trace(run_id, from_seq=from_seq, limit=page)
    out = [TraceEntryOut(**e.to_dict()) for e in entries]
    more = len(out) == page
    next_from = out[-1].seq + 1 if more else None
    steps = [f"read_trace with run_id={run_id!r} and from_seq={next_from}"] if more else \
        [f"show_run with run_id={run_id!r} for the run's status and output"]
    return TraceResult(ok=True, run_id=run_id, entries=out, next_from=next_from, next_steps=steps)


def draw_graph(opts: ServerOptions, workflow: str, format: str) -> GraphResult:
    from wfops.errors import WfopsError
    from wfops.loader.project import load_project
    from wfops.report.graph import FORMATS, render_graph

    if format not in FORMATS:
        raise UsageError(f"unknown graph format {format!r}", hint="use mermaid or dot")
    project = load_project(opts.root)
    found = project.workflows.get(workflow)
    if found is None:
        known = ", ".join(sorted(project.workflows)) or "none"
        broken = [f for f in project.broken_files if Path(f).stem == workflow]
        if broken:
            raise WfopsError(f"workflow {workflow!r} ({broken[0]}) does not load",
                             hint="call validate to see why")
        raise WfopsError(f"unknown workflow {workflow!r}", hint=f"workflows in this project: {known}")
    return GraphResult(ok=True, workflow=workflow, format=format, text=render_graph(found.model, format),
                       next_steps=[f"validate the workflow file {found.file}"])


def _project_relative(root: Path, path: str) -> str:
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")


def _store_path(opts: ServerOptions) -> Path:
    from wfops.loader.project import project_db_path

    return project_db_path(opts.root, opts.db)


@contextmanager
def _store(opts: ServerOptions, run_id: str | None) -> Iterator[Any]:
    """Open the store for reading; a store that does not exist yet knows no run."""
    path = _store_path(opts)
    if not path.exists():
        raise UnknownRunError(f"no run {run_id!r}: there is no store at {path} yet",
                              hint="run_deployment starts a run")
    from wfops.store import open_store

    store = open_store(path)
    try:
        yield store
    finally:
        store.close()
