"""Start and resume deployment runs: the glue between project, gate, sources, engine and store.

These are the plain async functions the core API (`wfops.api.Project.run`/`resume`) drives.
"""

from __future__ import annotations

import os
import secrets as _random
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wfops.compiler.artifact import load_artifact
from wfops.dburl import location_of
from wfops.diagnostics import Diagnostic
from wfops.engine.engine import Engine
from wfops.engine.fork import fork_point
from wfops.engine.types import RunSnapshot
from wfops.errors import ProjectNotFound, RefusedError, UsageError, WfopsError
from wfops.fastpath.output_order import declared_outputs, with_declared_output
from wfops.loader.project import find_root, load_project, project_db_path
from wfops.runner.gate_record import Ready, contracts_match, from_gate, recorded
from wfops.runner.gate_record import save as save_record
from wfops.runner.inputs import merge, read_secrets, refuse_secret_values
from wfops.runner.placement import executor_for
from wfops.runner.progress import OnStep, ProgressSink
from wfops.runner.sources import live_catalog, opened_sources, used_sources
from wfops.runner.stop import StopSignal, name_stored
from wfops.schemacheck import first_error, with_defaults
from wfops.sources.contract import max_output_bytes
from wfops.sources.executor import Executor, ExecutorChoice, opened_executor
from wfops.sources.registry import BoundResolver, build_sources
from wfops.statedir import refuse_linked_state
from wfops.store import open_store
from wfops.store.cache import limits as cache_limits
from wfops.store.kept import KeptStore
from wfops.store.protocol import Slot


@dataclass(frozen=True)
class RunOptions:
    deployment: str
    input: Mapping[str, Any] = field(default_factory=dict)   # overlaid on the deployment's defaults
    project: str | Path | None = None
    db: str | Path | None = None
    on_step: OnStep | None = None
    executor: str | None = None   # `local` or `dask://HOST:PORT`; overrides the deployment's
    on_start: Callable[[str], None] | None = None  # told the run id once the run is in the store
    no_cache: bool = False  # `--no-cache`: every step runs; the step cache is neither read nor written
    slot: Slot | None = None  # the schedule slot the run claims as it is created (`SlotTaken` if claimed)
    unlocked: bool = False        # run the working tree (validated, not compared with the lock)
    stores: KeptStore | None = None  # a store kept open across runs (else one is opened and closed)


@dataclass(frozen=True)
class ResumeOptions:
    run_id: str
    outcome: str | None = None
    payload: Any = None
    project: str | Path | None = None
    db: str | Path | None = None
    on_step: OnStep | None = None
    executor: str | None = None   # default: the executor the run was started with
    no_cache: bool = False
    on_start: Callable[[str], None] | None = None  # told the run id once its checks passed and it is driven
    stores: KeptStore | None = None


@dataclass(frozen=True)
class ForkOptions:
    run_id: str
    from_step: str
    input: Mapping[str, Any] = field(default_factory=dict)  # overlaid on the original run's input
    project: str | Path | None = None
    db: str | Path | None = None
    on_step: OnStep | None = None
    on_start: Callable[[str], None] | None = None  # told the new run's id once it is stored and driven
    stores: KeptStore | None = None


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
    root = find_root(explicit=options.project)
    if options.unlocked:
        refuse_unlocked_in_ci()
    refuse_linked_state(root)  # before the gate record or the store is read or written
    max_output_bytes()  # a bad WFOPS_MAX_OUTPUT_BYTES is a usage error before anything runs
    cache_limits()  # and so are bad step cache limits
    given_executor = ExecutorChoice.parse(options.executor) if options.executor else None
    store: Any = None
    failed = True  # until the run is driven to its end: a kept store is then kept
    stored: str | None = None  # the run's id once it is in the store: every error after names it
    try:
        async with _gated(root, options.deployment, unlocked=options.unlocked) as (ready, opened):
            secret_values = read_secrets(ready.secrets)
            refuse_secret_values(options.input, secret_values, "input")
            run_input = merge(ready.input, options.input)
            choice = given_executor or ExecutorChoice.parse(ready.executor)
            executor = executor_for(choice, root, options.deployment, opened, ready.source_ids)
            async with opened_executor(executor):
                store = _take(options.stores, project_db_path(root, options.db))
                run_id = new_run_id()
                with store.run_lock(run_id):
                    store.begin_run(run_id, artifacts=ready.artifacts, normalized=ready.normalized,
                                    meta={"bindings": dict(ready.bindings), "secrets": list(ready.secrets),
                                          "project": str(root), "executor": choice.name,
                                          "outputs": declared_outputs(ready.workflows, ready.artifacts),
                                          **({"unlocked": True} if options.unlocked else {})},
                                    texts=ready.texts, slot=options.slot)
                    stored = run_id
                    stop = StopSignal(store)
                    engine = Engine(ready.workflows, _resolver(opened, ready.bindings, executor),
                                    ProgressSink(store, options.on_step, options.on_start),
                                    deployment=options.deployment, secrets=secret_values,
                                    artifacts=ready.artifacts, cancel=stop,
                                    cache=None if options.no_cache else store)
                    with stop.on_sigint():
                        snapshot = await engine.start(ready.workflow, run_input, run_id=run_id)
        failed = False
        return RunResult(snapshot, list(ready.warnings))
    except WfopsError as exc:
        if stored is not None:
            name_stored(exc, stored)
        raise
    finally:
        if store is not None:
            _give_back(options.stores, store, failed=failed)


@asynccontextmanager
async def _gated(root: Path, name: str, *, unlocked: bool = False) -> AsyncIterator[tuple[Ready, dict[str, Any]]]:
    """The run's decision and its opened sources: from the gate record when every input is
    unchanged and the sources report the recorded contracts, else from the full checks.
    `unlocked` always runs the full checks, without the lock, and records nothing."""
    ready = None if unlocked else recorded(root, name)
    if ready is not None:
        async with opened_sources(ready.sources, ready.source_ids) as opened:
            if contracts_match(ready, live_catalog(opened)):
                yield ready, opened
                return
    # deferred: the full checks (ruamel, every static check) only when the gate record misses
    from wfops.compiler.validate import validate_project
    from wfops.lock.gate import check_deployment

    validation = validate_project(root)
    gate = check_deployment(validation, name, unlocked=unlocked)
    _refuse_unless_ok(gate, name)
    deployment = validation.project.deployments[name].model
    ids = used_sources(gate.workflows.values(), gate.bindings)
    remote = [i for i in ids if i in validation.sources and validation.sources[i].kind == "mcp"]
    async with opened_sources(validation.sources, ids) as opened:
        if remote:  # python and std contracts were read at validation; MCP ones only now
            gate = check_deployment(validation, name, live_catalog=live_catalog({i: opened[i] for i in remote}),
                                    unlocked=unlocked, compiled=gate.compiled)
            _refuse_unless_ok(gate, name, live=True)
        ready = from_gate(gate, input=dict(deployment.input), secrets=list(deployment.secrets),
                          sources=dict(validation.sources), source_ids=ids,
                          executor=ExecutorChoice.of_deployment(deployment.executor).name)
        if not unlocked:  # the record stands for the locked decision only
            save_record(root, name, validation, ready, live_catalog(opened))
        yield ready, opened


def refuse_unlocked_in_ci() -> None:
    """CI runs what the lock says: a run of the working tree there would hide a stale lock."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        raise RefusedError("--unlocked is refused when CI is set: CI runs what wfops.lock records",
                           hint="run `wfops compile` and commit wfops.lock, then run without --unlocked")


async def resume_run(options: ResumeOptions) -> RunResult:
    """Continue an interrupted run (answering its interrupt), a crashed or cancelled one (from
    its last committed step), or redrive a failed one (its failed step runs again, with the
    next attempt number and the same idempotency key). The workflows come from the artifacts
    stored for the run, not the files."""
    root, db_path = _resume_paths(options)
    given_executor = ExecutorChoice.parse(options.executor) if options.executor else None
    with _borrowed(options.stores, db_path) as store:
        first = store.get_run(options.run_id)
        _refuse_finished(first.snapshot)
        if root is None:  # outside the project, with --db / WFOPS_DB: the run remembers its project
            root = _stored_root(first.meta, options.run_id)
        return await _continue(store, root, options.run_id, options.outcome, options.payload, options.on_step,
                               given_executor, options.on_start, no_cache=options.no_cache)


async def fork_run(options: ForkOptions) -> RunResult:
    """A new run of the same artifacts, from the state run `run_id` had just before it first
    ran `from_step`, with its input overlaid by `options.input`; the original is untouched."""
    root, db_path = _resume_paths(ResumeOptions(options.run_id, project=options.project, db=options.db))
    with _borrowed(options.stores, db_path) as store:
        record = store.get_run(options.run_id)
        source = record.snapshot
        if root is None:
            root = _stored_root(record.meta, options.run_id)
        workflows, _artifacts = _stored_workflows(store, source.run_id, record.meta)
        top = workflows[source.workflow]
        if options.from_step not in {step.id for step in top.steps}:
            raise RefusedError(f"workflow {source.workflow} of run {source.run_id} has no step {options.from_step!r}",
                               hint=f"`wfops runs trace {source.run_id}` shows the steps it ran")
        cut = fork_point(store.trace(source.run_id), options.from_step, source.run_id)
        refuse_secret_values(options.input, read_secrets(record.meta.get("secrets") or []), "input")
        run_input = _fork_input(top.input, source.input, options.input)
        run_id = new_run_id()
        meta = {**record.meta, "forked_from": {"run_id": source.run_id, "step": options.from_step, "seq": cut}}
        store.fork_run(source.run_id, run_id, upto_seq=cut, input=run_input, meta=meta)
        return await _continue(store, root, run_id, None, None, options.on_step, on_start=options.on_start)


def _take(stores: KeptStore | None, location: Path | str) -> Any:
    return open_store(location) if stores is None else stores.take(location)


def _give_back(stores: KeptStore | None, store: Any, *, failed: bool) -> None:
    """`failed`: an error on its way out (a store error, an interrupt) may have left the
    connection mid-transaction, so a kept store is then closed rather than kept."""
    if stores is None:
        store.close()
    else:
        stores.give_back(store, failed=failed)


@contextmanager
def _borrowed(stores: KeptStore | None, location: Path | str) -> Iterator[Any]:
    """The store a run uses, as `_take` and `_give_back` lend it."""
    store = _take(stores, location)
    try:
        yield store
    except BaseException:
        _give_back(stores, store, failed=True)
        raise
    _give_back(stores, store, failed=False)



def _fork_input(schema: dict[str, Any] | None, original: Any, changes: Mapping[str, Any]) -> Any:
    if not changes:
        return original
    if not isinstance(original, dict):
        raise UsageError("the original run's input is not an object; --input cannot change it")
    given = with_defaults(schema, merge(original, changes))
    problem = first_error(schema, given)
    if problem is not None:
        raise RefusedError(f"invalid input for the fork: {problem}", hint="fix the values given with --input")
    return given


async def _continue(store: Any, root: Path, run_id: str, outcome: str | None, payload: Any,
                    on_step: OnStep | None, given_executor: ExecutorChoice | None = None,
                    on_start: Callable[[str], None] | None = None, *, no_cache: bool = False) -> RunResult:
    """Drive a stored run on from its trace, holding its lock; any error names the run."""
    try:
        return await _drive_stored(store, root, run_id, outcome, payload, on_step, given_executor, on_start,
                                   no_cache)
    except WfopsError as exc:
        name_stored(exc, run_id)
        raise


async def _drive_stored(store: Any, root: Path, run_id: str, outcome: str | None, payload: Any,
                        on_step: OnStep | None, given_executor: ExecutorChoice | None,
                        on_start: Callable[[str], None] | None = None, no_cache: bool = False) -> RunResult:
    # deferred: comparing contracts with the lock is off the record-hit path (a plain run)
    from wfops.runner.resume_drift import resumed_contract_drift

    max_output_bytes()  # a bad WFOPS_MAX_OUTPUT_BYTES is a usage error before anything runs
    cache_limits()
    with store.run_lock(run_id):
        record = store.get_run(run_id)  # trust the store, not what we read before the lock
        snapshot = record.snapshot
        _refuse_finished(snapshot)
        if snapshot.status != "interrupted" and (outcome is not None or payload is not None):
            raise UsageError(f"run {snapshot.run_id} is {snapshot.status} and not waiting at an interrupt; "
                             "resume it without --outcome/--payload")
        store.clear_cancel(run_id)  # a request that came after the last stop is for that drive only
        workflows, artifacts = _stored_workflows(store, snapshot.run_id, record.meta)
        bindings = dict(record.meta.get("bindings") or {})
        secret_values = read_secrets(record.meta.get("secrets") or [])
        refuse_secret_values(payload, secret_values, "payload")
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
                stop = StopSignal(store)
                engine = Engine(workflows, _resolver(opened, bindings, executor), ProgressSink(store, on_step),
                                deployment=snapshot.deployment, secrets=secret_values, artifacts=artifacts,
                                cancel=stop, cache=None if no_cache else store)
                if on_start is not None:
                    on_start(run_id)
                with stop.on_sigint():
                    final = await engine.resume(snapshot, trace, outcome=outcome, payload=payload)
    return RunResult(final, warnings)


def _stored_workflows(store: Any, run_id: str, meta: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The run's workflow models, rebuilt from its stored artifacts (outputs in their declared
    key order), and their hashes."""
    stored = store.run_workflows(run_id)
    outputs = meta.get("outputs") or {}
    workflows = {name: load_artifact(with_declared_output(normalized, outputs.get(digest)))
                 for name, (digest, normalized) in stored.items()}
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
    refuse_linked_state(root)
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
    if snapshot.status == "completed":
        raise RefusedError(f"run {snapshot.run_id} is {snapshot.status}; nothing to resume")

