"""Start and resume deployment runs: the glue between project, gate, sources, engine and store.

These are the plain async functions the core API (`wfops.api.Project.run`/`resume`) drives.
"""

from __future__ import annotations

import os
import secrets as _random
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wfops.compiler.artifact import load_artifact
from wfops.dburl import location_of
from wfops.diagnostics import Diagnostic
from wfops.engine.types import RunSnapshot
from wfops.errors import ProjectNotFound, RefusedError, UsageError
from wfops.loader.project import find_root, load_project, project_db_path
from wfops.runner.gate_record import Ready, contracts_match, from_gate, recorded
from wfops.runner.gate_record import save as save_record
from wfops.runner.inputs import merge, read_secrets
from wfops.runner.placement import executor_for
from wfops.runner.progress import OnStep, ProgressSink
from wfops.runner.sources import live_catalog, opened_sources, used_sources
from wfops.sources.executor import Executor, ExecutorChoice, opened_executor
from wfops.sources.registry import BoundResolver, build_sources
from wfops.store import open_store


@dataclass(frozen=True)
class RunOptions:
    deployment: str
    input: Mapping[str, Any] = field(default_factory=dict)   # overlaid on the deployment's defaults
    project: str | Path | None = None
    db: str | Path | None = None
    on_step: OnStep | None = None
    executor: str | None = None   # `local` or `dask://HOST:PORT`; overrides the deployment's
    on_start: Callable[[str], None] | None = None  # told the run id once the run is in the store


@dataclass(frozen=True)
class ResumeOptions:
    run_id: str
    outcome: str | None = None
    payload: Any = None
    project: str | Path | None = None
    db: str | Path | None = None
    on_step: OnStep | None = None
    executor: str | None = None   # default: the executor the run was started with


@dataclass
class RunResult:
    snapshot: RunSnapshot
    warnings: list[Diagnostic] = field(default_factory=list)


def new_run_id() -> str:
    """Sortable and readable: UTC time, then randomness so concurrent starts never collide."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{_random.token_hex(4)}"


async def run_deployment(options: RunOptions) -> RunResult:
    """Gate (project, lock, drift, live contracts), then execute one run of a deployment.

    An unchanged deployment starts from its gate record (see `gate_record`); any change
    runs the full checks. Raises `RefusedError` (with diagnostics) before anything is
    stored when the run may not start.
    """
    # deferred: wfops.engine.engine imports asyncio (~33 ms) and pydantic (~30 ms), only for a run
    from wfops.engine.engine import Engine

    root = find_root(explicit=options.project)
    given_executor = ExecutorChoice.parse(options.executor) if options.executor else None
    store: Any = None
    try:
        async with _gated(root, options.deployment) as (ready, opened):
            secret_values = read_secrets(ready.secrets)
            run_input = merge(ready.input, options.input)
            choice = given_executor or ExecutorChoice.parse(ready.executor)
            executor = executor_for(choice, root, options.deployment, opened, ready.source_ids)
            async with opened_executor(executor):
                store = open_store(project_db_path(root, options.db))
                run_id = new_run_id()
                with store.run_lock(run_id):
                    store.begin_run(run_id, artifacts=ready.artifacts, normalized=ready.normalized,
                                    meta={"bindings": dict(ready.bindings), "secrets": list(ready.secrets),
                                          "project": str(root), "executor": choice.name})
                    engine = Engine(ready.workflows, _resolver(opened, ready.bindings, executor),
                                    ProgressSink(store, options.on_step, options.on_start),
                                    deployment=options.deployment, secrets=secret_values,
                                    artifacts=ready.artifacts)
                    snapshot = await engine.start(ready.workflow, run_input, run_id=run_id)
        return RunResult(snapshot, list(ready.warnings))
    finally:
        if store is not None:
            store.close()


@asynccontextmanager
async def _gated(root: Path, name: str) -> AsyncIterator[tuple[Ready, dict[str, Any]]]:
    """The run's decision and its opened sources: from the gate record when every input is
    unchanged and the sources report the recorded contracts, else from the full checks."""
    ready = recorded(root, name)
    if ready is not None:
        async with opened_sources(ready.sources, ready.source_ids) as opened:
            if contracts_match(ready, live_catalog(opened)):
                yield ready, opened
                return
    # deferred: the full checks (ruamel, jsonschema, every static check) are off the
    # record-hit path: an unchanged deployment starts from its gate record without them
    from wfops.compiler.validate import validate_project
    from wfops.lock.gate import check_deployment

    validation = validate_project(root)
    gate = check_deployment(validation, name)
    _refuse_unless_ok(gate, name)
    deployment = validation.project.deployments[name].model
    ids = used_sources(gate.workflows.values(), gate.bindings)
    remote = [i for i in ids if i in validation.sources and validation.sources[i].kind == "mcp"]
    async with opened_sources(validation.sources, ids) as opened:
        if remote:  # python and std contracts were read at validation; MCP ones only now
            gate = check_deployment(validation, name, live_catalog=live_catalog({i: opened[i] for i in remote}))
            _refuse_unless_ok(gate, name, live=True)
        ready = from_gate(gate, input=dict(deployment.input), secrets=list(deployment.secrets),
                          sources=dict(validation.sources), source_ids=ids,
                          executor=ExecutorChoice.of_deployment(deployment.executor).name)
        save_record(root, name, validation, ready, live_catalog(opened))
        yield ready, opened


async def resume_run(options: ResumeOptions) -> RunResult:
    """Continue an interrupted run (answering its interrupt) or a crashed one (from its last
    committed step). The workflows come from the artifacts stored for the run, not the files."""
    # deferred: wfops.engine.engine imports asyncio (~33 ms) and pydantic (~30 ms), only for a run
    from wfops.engine.engine import Engine

    # deferred: comparing contracts with the lock is off the record-hit path (a plain run)
    from wfops.runner.resume_drift import resumed_contract_drift

    root, db_path = _resume_paths(options)
    given_executor = ExecutorChoice.parse(options.executor) if options.executor else None
    store = open_store(db_path)
    try:
        first = store.get_run(options.run_id)
        _refuse_finished(first.snapshot)
        if root is None:  # outside the project, with --db / WFOPS_DB: the run remembers its project
            root = _stored_root(first.meta, options.run_id)
        with store.run_lock(options.run_id):
            record = store.get_run(options.run_id)  # trust the store, not what we read before the lock
            snapshot = record.snapshot
            _refuse_finished(snapshot)
            if snapshot.status == "running" and (options.outcome is not None or options.payload is not None):
                raise UsageError(f"run {snapshot.run_id} crashed mid-run and is not waiting at an interrupt; "
                                 "resume it without --outcome/--payload")
            workflows, artifacts = _stored_workflows(store, snapshot.run_id)
            bindings = dict(record.meta.get("bindings") or {})
            secret_values = read_secrets(record.meta.get("secrets") or [])
            ids = used_sources(workflows.values(), bindings)
            sources = _project_sources(root, ids, snapshot.run_id)
            trace = store.trace(snapshot.run_id)
            async with opened_sources(sources, ids) as opened:
                refusals, warnings = resumed_contract_drift(root, snapshot.deployment, workflows.values(),
                                                            bindings, opened)
                if refusals:
                    raise RefusedError(f"resume of {snapshot.run_id} refused: an MCP source drifted",
                                       diagnostics=refusals,
                                       hint="fix the findings above (`wfops check --live` shows them too)")
                choice = given_executor or ExecutorChoice.parse(str(record.meta.get("executor") or "local"))
                executor = executor_for(choice, root, snapshot.deployment, opened, ids)
                async with opened_executor(executor):
                    engine = Engine(workflows, _resolver(opened, bindings, executor),
                                    ProgressSink(store, options.on_step), deployment=snapshot.deployment,
                                    secrets=secret_values, artifacts=artifacts)
                    final = await engine.resume(snapshot, trace, outcome=options.outcome,
                                                payload=options.payload)
        return RunResult(final, warnings)
    finally:
        store.close()


def _stored_workflows(store: Any, run_id: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The run's workflow models, rebuilt from its stored artifacts, and their hashes."""
    stored = store.run_workflows(run_id)
    workflows = {name: load_artifact(normalized) for name, (_h, normalized) in stored.items()}
    return workflows, {name: digest for name, (digest, _n) in stored.items()}


def _project_sources(root: Path, ids: list[str], run_id: str) -> dict[str, Any]:
    """The project's sources as they are now; refuse when one the run uses does not load."""
    sources, problems = build_sources(load_project(root))
    broken = [d for d in problems if d.is_error and d.source in ids]
    if broken:
        raise RefusedError(f"cannot resume {run_id}: a source it uses does not load", diagnostics=broken)
    return dict(sources)


def _resume_paths(options: ResumeOptions) -> tuple[Path | None, Path | str]:
    try:
        root = find_root(explicit=options.project)
    except ProjectNotFound:
        explicit = options.db or os.environ.get("WFOPS_DB")
        if not explicit:
            raise
        return None, location_of(explicit) if isinstance(explicit, str) else explicit
    return root, project_db_path(root, options.db)


def _stored_root(meta: Mapping[str, Any], run_id: str) -> Path:
    stored = meta.get("project")
    if not stored or not Path(stored).is_dir():
        raise ProjectNotFound(f"run {run_id} needs its project for its sources, and none was found",
                              hint="run `wfops resume` inside the project, or pass --project DIR")
    return Path(stored)


def _resolver(opened: Mapping[str, Any], bindings: Mapping[str, str], executor: Executor) -> Any:
    """Calls go to the sources as the executor placed them (python ones on a cluster, or here)."""
    return BoundResolver({source_id: executor.place(source) for source_id, source in opened.items()}, bindings)


def _refuse_unless_ok(gate: Any, name: str, *, live: bool = False) -> None:
    if not gate.ok:
        # Live MCP contracts are compared only by `check --live`; plain `check` reads the lock.
        check = "`wfops check --live`" if live else "`wfops check`"
        raise RefusedError(f"run of {name} refused", diagnostics=list(gate.diagnostics),
                           hint=f"fix the findings above ({check} shows them too)")


def _refuse_finished(snapshot: RunSnapshot) -> None:
    if snapshot.status in ("completed", "failed"):
        raise RefusedError(f"run {snapshot.run_id} is {snapshot.status}; nothing to resume")

