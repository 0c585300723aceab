"""`wfops.Project`: the whole lifecycle of a project, as plain calls with typed results.

    import wfops
    project = wfops.Project("path/to/project")      # default: nearest project upward
    report = project.validate()                      # Report: .ok, .diagnostics
    run = project.run("meeting-report.local", input={"path": "notes.md"})
    run.status, run.to_dict()

Every method returns data and raises only from the `wfops.errors` tree; none
prints, exits or reads `sys.argv`. The CLI and `wfops mcp` are renderers of these
results. Methods are synchronous: from async code, call them in a worker thread
(`await asyncio.to_thread(project.run, ...)`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.api.findings import Report
from wfops.api.jsonpatch import PatchError, parse_pointer
from wfops.dburl import display, is_url, location_of
from wfops.errors import (
    InvalidArgument,
    ProjectNotFound,
    RefusedError,
    RunBusyError,
    UnknownRunError,
    UsageError,
    WfopsError,
)
from wfops.jsonvalues import check_json_value
from wfops.loader.project import find_root, load_project, project_db_path
from wfops.loader.wftests import find_test_files
from wfops.sources.modules import forget_project_modules

if TYPE_CHECKING:  # types only: `validate` must not load the engine or the store
    from wfops.api.approvals import ClientTrust, ClientWrites, Declaration
    from wfops.api.authoring import FileText, ProjectListing, Skeleton, WriteReport
    from wfops.api.browse import RunsPage
    from wfops.api.cache import CacheEntry
    from wfops.api.catalog import Catalog
    from wfops.api.ci_schedule import ScheduleWorkflow
    from wfops.api.results import (
        CallOutcome,
        Capabilities,
        CapabilityInfo,
        CompileReport,
        CopyReport,
        Run,
    )
    from wfops.api.scaffold_test import TestSkeleton
    from wfops.api.schedules import ScheduleInfo, TickReport
    from wfops.engine.types import RunSnapshot, TraceEntry
    from wfops.store.kept import KeptStore
    from wfops.store.protocol import RunRecord, StepLog, Store
    from wfops.testing.results import TestReport

STATUSES = ("running", "completed", "failed", "interrupted", "cancelled")
GRAPH_FORMATS = ("mermaid", "dot")
OnStep = Callable[["TraceEntry"], None]


class Project:
    """A wfops project on disk and its run store.

    `root`: the project directory (default: the nearest one upward from the current
    directory that holds sources.yaml or wfops.lock). `db`: the run store, a SQLite file
    path or a `postgresql://` URL (default `$WFOPS_DB`, else `.wfops/wfops.db` under the
    root). With `db` (or `WFOPS_DB`) and
    no project around, the run history can still be read and runs resumed (a run
    remembers its project); everything else raises `ProjectNotFound`.

    `client`: this Project acts for an MCP client, not a person (`wfops mcp`): the sources
    its writes add or change are recorded, and while one awaits a person's approval every
    method that could start or import a source raises `SourcesAwaitApproval`
    (wfops.api.approvals). Without it (the CLI, Python code) nothing is held.
    """

    def __init__(self, root: str | Path | None = None, *, db: str | Path | None = None,
                 client: ClientTrust | None = None) -> None:
        self._db = db
        self._client = client
        # One store connection for every run and read of this Project (and its `acting_for`
        # twins, which share this dict); made on first use, since validate never opens a store.
        self._kept: dict[str, KeptStore] = {}
        self._missing: ProjectNotFound | None = None
        self._root: Path | None = None
        try:
            self._root = find_root(explicit=root) if root is not None else find_root()
        except ProjectNotFound as exc:
            if not (db or os.environ.get("WFOPS_DB")):
                raise
            self._missing = exc

    def close(self) -> None:
        """Close the store connection this Project keeps open across its runs (it reopens on
        the next call that needs it). `with Project(...) as project:` closes it at the end."""
        kept = self._kept.get("store")
        if kept is not None:
            kept.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def nearest(cls, start: str | Path, *, db: str | Path | None = None) -> Project:
        """The project around `start`: the nearest directory upward holding sources.yaml or wfops.lock."""
        return cls(find_root(Path(start)), db=db)

    def acting_for(self, client: ClientTrust) -> Project:
        """This project as an MCP client's (see `client`): same root and store."""
        twin = copy.copy(self)
        twin._client = client
        return twin

    @property
    def client(self) -> ClientTrust | None:
        return self._client

    @property
    def root(self) -> Path:
        if self._root is None:
            assert self._missing is not None
            raise self._missing
        return self._root

    @property
    def db_path(self) -> Path | str:
        """The store: a SQLite file path, or a PostgreSQL URL (text)."""
        if self._root is None:
            given = self._db or os.environ["WFOPS_DB"]
            return location_of(given) if isinstance(given, str) else given
        return project_db_path(self._root, self._db)

    # -- files: validate, compile, check -------------------------------------------------
    def validate(self, paths: list[str] | None = None, text: str | None = None, kind: str | None = None, *,
                 path: str | None = None, base: str | Path | None = None) -> Report:
        """Syntax, schema and static checks.

        `paths`: report only on these files or folders (relative to `base`, default the
        project root; each must lie inside the project). `text` + `kind` (workflow,
        deployment or sources): check YAML text not yet saved, as if it replaced `path`
        (or the file of the same name), in the context of the project.
        """
        # deferred: the validate module (the cache, the checks) is off the record-hit path (a run)
        import wfops.api.validate as checks

        self._fresh()
        if text is not None:
            if kind is None:
                raise UsageError("`kind` is required with `text`", hint="pass kind: workflow, deployment or sources")
            with self._for_client(None), self._unsaved_sources(text if kind == "sources" else None):
                name, found, static = checks.validate_inline(self.root, text, kind, path)  # type: ignore[arg-type]
            return Report(found, [name], static)
        wanted = list(paths or [])
        with self._for_client(None):
            found = checks.validate_paths(self.root, wanted, Path(base) if base is not None else None)
        return Report(found, wanted or ["(whole project)"])

    def compile(self, out: str | Path | None = None) -> CompileReport:
        """Validate (MCP servers are started to snapshot their contracts) and write wfops.lock;
        with `out`, also one artifact JSON per workflow there."""
        # deferred: wfops.api.compile is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.compile import compile_lock

        self._fresh()
        with self._for_client("compile"):
            return compile_lock(self.root, out)

    def check(self, live: bool = False) -> Report:
        """Compare the project with wfops.lock: stale lock, contract drift (`live`: start MCP sources)."""
        # deferred: wfops.lock.check is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.check import check_project

        self._fresh()
        with self._for_client("check --live" if live else None):
            return check_project(self.root, live=live)

    def test(self, paths: list[str] | None = None, pattern: str | None = None, *,
             base: str | Path | None = None) -> TestReport:
        """Run the workflow tests (`*.wftest.yaml`) under `paths` (files or folders relative to
        `base`, default the project root; default the project's `tests/` folder), offline with
        capabilities mocked; `pattern` keeps the cases whose `file::name` contains it."""
        # deferred: the test runner loads the engine, the checks and pydantic; no hot command tests
        from wfops.testing.run import run_tests

        files = find_test_files(self.root, list(paths or []), base=Path(base) if base is not None else None)
        self._fresh()
        with self._for_client(None):
            report: TestReport = _drive(run_tests(self.root, files, pattern))
        return report

    def deployments(self) -> list[str]:
        return sorted(load_project(self.root).deployments)

    # -- authoring: project files through the path guard ---------------------------------
    def list_project(self) -> ProjectListing:
        """Workflows (with their input schema and the deployments that run them), deployments,
        sources, and the files wfops reads."""
        # deferred: authoring (the validate overlay, ruamel edits) is off the record-hit path (a run)
        import wfops.api.authoring as authoring

        return authoring.list_project(self.root)

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> FileText:
        """A project YAML file or python source (relative to the root; never outside it)."""
        # deferred: authoring (the validate overlay, ruamel edits) is off the record-hit path (a run)
        import wfops.api.authoring as authoring

        return authoring.read_file(self.root, path, start_line, end_line)

    def write_file(self, path: str, text: str, *, force: bool = False) -> WriteReport:
        """Write a workflow, deployment or sources.yaml, after validating the whole project with
        `text` in its place: refused (the file untouched) when that adds errors, unless `force`."""
        self._fresh()
        # deferred: authoring (the validate overlay, ruamel edits) is off the record-hit path (a run)
        import wfops.api.authoring as authoring

        with self._for_client(None):
            return self._held_after(authoring.write_file(self.root, path, text, force=force,
                                                         client=self._writes()))

    def patch_file(self, path: str, patch: Any) -> WriteReport:
        """Apply an RFC 6902 JSON Patch to a workflow, deployment or sources.yaml, keeping its
        comments and formatting; validated and written as `write_file` does."""
        self._fresh()
        # deferred: authoring (the validate overlay, ruamel edits) is off the record-hit path (a run)
        import wfops.api.authoring as authoring

        with self._for_client(None):
            return self._held_after(authoring.patch_file(self.root, path, patch, client=self._writes()))

    def new_workflow(self, capability: str, name: str, *, write: bool = False) -> Skeleton:
        """A valid workflow calling `capability` (concrete ref), its required inputs bound from a
        generated input schema and its outcomes routed; written to workflows/NAME.yaml if `write`."""
        info = self.capability(capability)
        # deferred: authoring (the validate overlay, ruamel edits) is off the record-hit path (a run)
        import wfops.api.authoring as authoring

        return authoring.new_workflow(self.root, info, name, write=write)

    def new_test(self, workflow: str, *, write: bool = False) -> TestSkeleton:
        """A workflow test file for `workflow` to start from: one case where every call and
        interrupt answers its first outcome, and one per other outcome of each step, mocked
        from the capabilities' contracts; written to tests/WORKFLOW.wftest.yaml if `write`."""
        # deferred: scaffolding is off the record-hit path (a run)
        from wfops.api.scaffold_test import TestSkeleton, test_text
        from wfops.loader.project import load_project

        loaded = load_project(self.root)
        if workflow not in loaded.workflows:
            raise UsageError(f"unknown workflow {workflow!r}",
                             hint="workflows: " + (", ".join(sorted(loaded.workflows)) or "none"))
        runs_it = [d.model for d in loaded.deployments.values() if d.model.workflow_name == workflow]
        bindings = dict(runs_it[0].bindings) if len(runs_it) == 1 else {}
        workflows = {name: item.model for name, item in loaded.workflows.items()}
        text = test_text(workflows, workflow, bindings, self.capability)
        path = f"tests/{workflow}.wftest.yaml"
        found = self.validate(text=text, kind="wftest", path=path).diagnostics
        report = self.write_file(path, text) if write else None
        return TestSkeleton(workflow, path, text, found, report)

    # -- sources an MCP client wrote ------------------------------------------------------
    def sources_awaiting_approval(self) -> list[Declaration]:
        """The declarations in sources.yaml an MCP client wrote and no person approved yet."""
        # deferred: approvals are off the validate cache-hit path (only `wfops sources` and `wfops mcp` ask)
        from wfops.api.approvals import held

        return held(self.root)

    def approve_source(self, source: str, *, by: str, expected: str | None = None) -> Declaration:
        """Record a person's yes for `source` as sources.yaml declares it now; returns that
        declaration (a later change to it needs a new yes). `expected`: the key of the
        declaration the person was shown (refused if it changed since)."""
        # deferred: approvals are off the validate cache-hit path (only `wfops sources` and `wfops mcp` ask)
        from wfops.api.approvals import approve

        return approve(self.root, source, by, expected)

    # -- runs ----------------------------------------------------------------------------
    def run(self, deployment: str, input: Mapping[str, Any] | None = None, *,  # noqa: A002 - the contract's word
            on_step: OnStep | None = None, on_start: Callable[[str], None] | None = None,
            executor: str | None = None, unlocked: bool = False, no_cache: bool = False) -> Run:
        """Execute a deployment to its end, a failure or its first interrupt.

        `input` is merged over the deployment's defaults. Raises `RefusedError` (with
        `diagnostics`) when the run may not start; a run that starts returns a `Run`
        whatever its status. `on_step` is called with each committed trace entry; `on_start` with
        the run id once the run is stored (it has passed every check and will be driven).
        `executor` (`local`, or `dask://HOST:PORT` for a Dask cluster) overrides the
        deployment's `executor:` for this run; a bad one raises `UsageError`, a cluster
        that cannot be reached `RefusedError`. `unlocked`: run the working tree after a full
        validate, without reading or writing wfops.lock (the dev loop; refused when `CI` is set);
        the run is marked `unlocked`.
        `no_cache`: every step runs, the step cache neither read nor written (docs/caching.md).
        """
        # deferred: wfops.runner is not needed on the validate cache-hit path (pre-commit)
        from wfops.runner import RunOptions, run_deployment

        given = dict(input or {})
        check_json_value(given, "input")
        self._fresh()
        with self._for_client("this run"):
            result = _drive(run_deployment(RunOptions(deployment, input=given, project=self.root, db=self._db,
                                                      on_step=on_step, on_start=on_start, executor=executor,
                                                      unlocked=unlocked, no_cache=no_cache,
                                                      stores=self._stores())))
        return self._as_stored(result.snapshot, warnings=list(result.warnings))

    def resume(self, run_id: str, outcome: str | None = None, payload: Any = None, *,
               on_step: OnStep | None = None, executor: str | None = None,
               on_start: Callable[[str], None] | None = None, no_cache: bool = False) -> Run:
        """Continue an interrupted run (answering it with `outcome` and `payload`), a crashed or
        cancelled one, or redrive a failed one from the step that failed.
        `executor`: as for `run`; by default the one the run was started with. `on_start`: as
        for `run`, told the run id once the resume passed its checks and the run is driven.
        `no_cache`: as for `run`."""
        run_id = self.resolve_run(run_id)
        # deferred: wfops.runner is not needed on the validate cache-hit path (pre-commit)
        from wfops.runner import ResumeOptions, resume_run

        check_json_value(payload, "payload")
        self._fresh()
        with self._for_client("resuming the run"):
            result = _drive(resume_run(ResumeOptions(run_id, outcome=outcome, payload=payload,
                                                     project=self._root, db=self.db_path, on_step=on_step,
                                                     executor=executor, on_start=on_start,
                                                     no_cache=no_cache, stores=self._stores())))
        return self._as_stored(result.snapshot, warnings=list(result.warnings))

    def fork(self, run_id: str, from_step: str, input: Mapping[str, Any] | None = None, *,  # noqa: A002 - the contract's word
             on_step: OnStep | None = None, on_start: Callable[[str], None] | None = None) -> Run:
        """Start a new run of `run_id`'s artifacts from the state it had just before it first
        ran top-level step `from_step`, its input overlaid with `input`, and drive it like
        `run` (`on_start` is told the new run's id). The original run is not changed; the new
        one records `forked_from`."""
        run_id = self.resolve_run(run_id)
        # deferred: wfops.runner is not needed on the validate cache-hit path (pre-commit)
        from wfops.runner import ForkOptions, fork_run

        given = dict(input or {})
        check_json_value(given, "input")
        self._fresh()
        with self._for_client("the forked run"):
            result = _drive(fork_run(ForkOptions(run_id, from_step, input=given, project=self._root,
                                                 db=self.db_path, on_step=on_step, on_start=on_start,
                                                 stores=self._stores())))
        return self._as_stored(result.snapshot, warnings=list(result.warnings))

    def cancel(self, run_id: str) -> Run:
        """Stop a run. One that another process drives gets a cancel request, which its driver
        sees within a fraction of a second (cancelling the step in flight where it awaits) and
        then records `cancelled`; one nobody drives (interrupted, or crashed while running)
        is `cancelled` at once. A completed or failed run is refused; a cancelled one is
        returned as it is. Returns the run as stored after the request."""
        run_id = self.resolve_run(run_id)
        with self._store(run_id) as store:
            status = store.get_run(run_id).snapshot.status
            if status in ("completed", "failed"):
                raise RefusedError(f"run {run_id} is {status}; there is nothing to cancel")
            if status != "cancelled":
                try:
                    with store.run_lock(run_id):
                        if store.get_run(run_id).snapshot.status in ("running", "interrupted"):
                            store.mark_cancelled(run_id)
                except RunBusyError:
                    store.request_cancel(run_id)
        return self.get_run(run_id)

    # -- schedules -----------------------------------------------------------------------
    def schedules(self, deployment: str | None = None, *, count: int = 3,
                  at: str | None = None) -> list[ScheduleInfo]:
        """Every schedule entry (of one deployment), with its next `count` times after `at`
        (ISO 8601 with an offset; default now) in its time zone and UTC, and its last run."""
        # deferred: schedules are off the validate cache-hit path
        from wfops.api.schedules import parse_at, schedules

        return schedules(self.root, self.db_path, deployment=deployment, count=count,
                         at=parse_at(at), store_exists=not self._no_store_yet())

    def tick(self, at: str | None = None, *, dry_run: bool = False) -> TickReport:
        """Start every scheduled run due at `at` (ISO 8601 with an offset or `Z`; default now)
        whose slot no run has claimed, each exactly once however many ticks race on the store,
        and drive each to its end, failure or interrupt. `dry_run`: only say what would start."""
        # deferred: schedules are off the validate cache-hit path
        from wfops.api.schedules import parse_at, tick

        moment = parse_at(at)
        self._fresh()
        with self._for_client("scheduled runs"):
            return _drive(tick(self.root, self.db_path, moment, dry_run=dry_run, cancel=self.cancel))  # type: ignore[no-any-return]

    def schedule_workflow(self) -> ScheduleWorkflow:
        """Write (or refresh) the scheduled GitHub Actions workflow from the deployments'
        schedules; `wfops check` reports it stale once a schedule changes."""
        # deferred: schedules are off the validate cache-hit path
        from wfops.api.ci_schedule import refresh

        return refresh(self.root)

    def runs(self, deployment: str | None = None, status: str | None = None, limit: int = 20, *,
             since: str | None = None, scheduled: bool = False) -> list[Run]:
        """Run history, newest first. `since`: only runs started in the last `30s`, `15m`, `2h`,
        `3d` or `1w`, or at or after an ISO date or time (UTC unless it names its zone).
        `scheduled`: only the runs a schedule started (with their slot)."""
        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r}: use one of {', '.join(STATUSES)}")
        # deferred: cache-hit path, which returns only a Report
        from wfops.api.runs import since_stamp

        after = since_stamp(since) if since is not None else None
        records = []
        orphans: set[str] = set()
        slots: dict[str, dict[str, str] | None] = {}
        ever = deployment is None
        if not self._no_store_yet():  # reading never creates a store: an empty history is empty
            with self._store() as store:
                records = store.list_runs(deployment=deployment, status=status, limit=max(1, limit), since=after,
                                          scheduled=scheduled)
                slots = {r.snapshot.run_id: _slot(store, r.snapshot.run_id) for r in records} if scheduled else {}
                ever = bool(records) or deployment is None or bool(store.list_runs(deployment=deployment, limit=1))
                orphans = {r.snapshot.run_id for r in records
                           if r.snapshot.status == "running" and not store.run_is_driven(r.snapshot.run_id)}
        if not ever and deployment not in self.deployments():
            # A typo would otherwise read as "no runs": name it, and what exists.
            raise UsageError(f"unknown deployment {deployment!r}: the project has no such deployment and the "
                             "store holds no run of it",
                             hint="deployments: " + (", ".join(self.deployments()) or "none"))
        return [_run_of(r, orphaned=r.snapshot.run_id in orphans, slot=slots.get(r.snapshot.run_id))
                for r in records]

    def resolve_run(self, run_id: str) -> str:
        """The id a run reference stands for: `last` is the newest run, `last:DEPLOYMENT` the
        newest of that deployment; anything else is taken as an id."""
        if run_id != "last" and not run_id.startswith("last:"):
            return run_id
        deployment = run_id.partition(":")[2] or None
        newest = self.runs(deployment=deployment, limit=1)
        if not newest:
            raise UnknownRunError(f"no run {run_id!r}: the store holds no run"
                                  + (f" of deployment {deployment!r}" if deployment else ""))
        return newest[0].run_id

    def get_run(self, run_id: str) -> Run:
        """One run, with its input and its state after the last committed step (`details`);
        `orphaned` is set when it is `running` but no process drives it."""
        run_id = self.resolve_run(run_id)
        # deferred: wfops.runner is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.runs import RunDetails
        from wfops.runner.state import shown_input_and_state

        with self._store(run_id) as store:
            record = store.get_run(run_id)
            orphaned = record.snapshot.status == "running" and not store.run_is_driven(run_id)
            shown_input, state = shown_input_and_state(store, record)
            slot = _slot(store, run_id)
        return _run_of(record, orphaned=orphaned, details=RunDetails(shown_input, state), slot=slot)

    def run_value(self, run_id: str, pointer: str) -> Any:
        """One value of a run by JSON Pointer: into the run object (`/output`, `/error`,
        `/interrupt/request`, ...) or one trace entry (`/trace/<seq>/output`, `/trace/<seq>/input`)."""
        run_id = self.resolve_run(run_id)

        try:
            parts = parse_pointer(pointer, "value")
        except PatchError as exc:
            raise InvalidArgument(exc.message, argument="value") from None
        if parts[:1] == ["trace"]:
            if len(parts) < 2 or not parts[1].isdigit():
                raise InvalidArgument(f"value {pointer!r}: write /trace/<seq>/<field>", argument="value")
            entries = self.trace(run_id, from_seq=int(parts[1]), limit=1)
            if not entries or entries[0].seq != int(parts[1]):
                raise InvalidArgument(f"run {run_id} has no trace entry {parts[1]}", argument="value")
            node: Any = entries[0].to_dict()
            parts = parts[2:]
        else:
            node = self.get_run(run_id).to_dict()
        for part in parts:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise InvalidArgument(f"run {run_id} has no value at {pointer!r}", argument="value",
                                      hint="e.g. /output, /error, /interrupt/request, /trace/3/output")
        return node

    def trace(self, run_id: str, from_seq: int | None = None, limit: int | None = None) -> list[TraceEntry]:
        """A run's trace entries in seq order (from `from_seq`, at most `limit`)."""
        run_id = self.resolve_run(run_id)
        with self._store(run_id) as store:
            store.get_run(run_id)  # an unknown id is an error, not an empty trace
            return store.trace(run_id, from_seq=from_seq, limit=limit)

    def step_logs(self, run_id: str, step: str | None = None) -> list[StepLog]:
        """What the run's python nodes printed and logged, per attempt of a step, in seq order
        (a failed attempt ends with its traceback); `step`: only that step's (its attempts and,
        for a foreach, its items'). Each is bounded and masked as the trace is."""
        run_id = self.resolve_run(run_id)
        with self._store(run_id) as store:
            return store.step_logs(run_id, step)

    def prune(self, older_than_days: float) -> int:
        """Delete finished runs last updated more than `older_than_days` ago; how many."""
        # deferred: the store is off the validate cache-hit path (pre-commit)
        from wfops.store.base import prune_cutoff

        prune_cutoff(older_than_days)  # an age out of range is refused even before there is a store
        if self._no_store_yet():
            return 0
        with self._store() as store:
            return store.prune(older_than_days)

    # -- the step cache --------------------------------------------------------------------
    def cache_entries(self, *, deployment: str | None = None, older_than: str | float | None = None
                      ) -> list[CacheEntry]:
        """The step cache's entries, newest first: those of `deployment`, made more than
        `older_than` ago (`30s`, `10m`, `1h`, `7d`, or seconds)."""
        # deferred: the store is off the validate cache-hit path (pre-commit)
        import wfops.api.cache as cache

        cache.age_seconds(older_than)  # refused even before there is a store
        if self._no_store_yet():
            return []
        with self._store() as store:
            return cache.entries(store, deployment, older_than)

    def cache_entry(self, key: str) -> CacheEntry:
        """The entry whose key starts with `key`, with its output."""
        # deferred: the store is off the validate cache-hit path (pre-commit)
        import wfops.api.cache as cache

        if self._no_store_yet():  # reading never creates a store
            return cache.entry(None, key)
        with self._store() as store:
            return cache.entry(store, key)

    def clear_cache(self, *, deployment: str | None = None, older_than: str | float | None = None) -> int:
        """Remove step cache entries (as `cache_entries` selects them), but none a live run was
        served from; how many were removed."""
        # deferred: the store is off the validate cache-hit path (pre-commit)
        import wfops.api.cache as cache

        cache.age_seconds(older_than)
        if self._no_store_yet():
            return 0
        with self._store() as store:
            return cache.clear(store, deployment, older_than)

    def copy_runs(self, to: str | Path) -> CopyReport:
        """Copy this project's run history into the store `to` (typically the shared
        PostgreSQL one), whole runs with their traces and artifacts. Idempotent: runs
        the target holds already are left alone; runs being driven now are skipped."""
        # deferred: wfops.store is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.results import CopyReport
        from wfops.store import open_store
        from wfops.store.copy import copy_runs

        target_location = location_of(to) if isinstance(to, str) else to
        if str(target_location) == str(self.db_path):
            raise UsageError(f"the runs are already in {display(target_location)}",
                             hint="pass --to another store (e.g. postgresql://...)")
        target = open_store(target_location)  # first: a wrong URL is an error even with nothing to copy
        try:
            if self._no_store_yet():
                return CopyReport(target.name, [], [], [])
            with self._store() as source:
                done = copy_runs(source, target)
        finally:
            target.close()
        return CopyReport(target.name, done.copied, done.present, done.busy)

    def remove_run(self, run_id: str, *, force: bool = False) -> None:
        """Delete a finished run. An unfinished one (interrupted, or running: crashed) is refused
        unless `force`; a run a live process drives is never deleted (RunBusyError)."""
        run_id = self.resolve_run(run_id)
        # deferred: wfops.store is not needed on the validate cache-hit path (pre-commit)
        from wfops.store.protocol import FINISHED

        with self._store(run_id) as store:
            store.get_run(run_id)  # an unknown id is UnknownRunError, whatever the lock file name
            with store.run_lock(run_id):  # never delete a run under a live driver, even forced
                status = store.get_run(run_id).snapshot.status
                if status not in FINISHED and not force:
                    what = {"interrupted": "waits at an interrupt",
                            "running": "has not finished: it crashed, and `wfops resume` continues it",
                            }.get(status, "has not finished")
                    raise UsageError(f"run {run_id} is {status}: it {what}; only finished runs "
                                     f"({', '.join(FINISHED)}) are removed",
                                     hint=f"`wfops runs rm {run_id} --force` deletes it anyway")
                store.delete_run(run_id)

    def step_summary(self, run_id: str) -> str:
        """The run as markdown (status, output, error, the graph with the path taken), as
        `wfops run` appends it to a GitHub Actions job summary."""
        run_id = self.resolve_run(run_id)
        # deferred: off the validate cache-hit path (findings route) and `runs list`
        from wfops.compiler.artifact import load_artifact
        from wfops.report.summary import step_summary

        with self._store(run_id) as store:
            record = store.get_run(run_id)
            trace = store.trace(run_id)
            stored = store.run_workflows(run_id).get(record.snapshot.workflow)
        if stored is None:
            raise UnknownRunError(f"run {run_id!r} has no stored workflow artifact")
        return step_summary(record.snapshot, trace, load_artifact(stored[1]))

    # -- what a browser shows (`wfops ui`) -----------------------------------------------
    def find_runs(self, deployment: str | None = None, status: str | None = None, outcome: str | None = None,
                  since: str | None = None, until: str | None = None, offset: int = 0,
                  limit: int = 50) -> RunsPage:
        """One page of the run history, newest first, filtered (each None matches any;
        `since`/`until`: ISO 8601 times bounding when runs were created), with the counts
        by status under the same filters."""
        # deferred: the history page's helpers are off the validate cache-hit path (pre-commit)
        from wfops.api.browse import RunsPage, utc_stamp
        from wfops.api.runs import Run
        from wfops.store.protocol import RunFilter

        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r}: use one of {', '.join(STATUSES)}")
        if offset < 0 or not 1 <= limit <= 1000:
            raise InvalidArgument("offset must be >= 0 and limit between 1 and 1000", argument="limit")
        filters = RunFilter(deployment, status, outcome, utc_stamp(since, "since"), utc_stamp(until, "until"))
        if self._no_store_yet():
            return RunsPage([], {}, 0, offset, limit)
        with self._store() as store:
            counts = store.count_runs(filters)
            records = store.find_runs(filters, offset=offset, limit=limit)
        total = counts.get(status, 0) if status is not None else sum(counts.values())
        runs = [Run.of(r.snapshot, steps=r.steps, created_at=r.created_at, updated_at=r.updated_at,
                       forked_from=_origin(r.meta)) for r in records]
        return RunsPage(runs, counts, total, offset, limit)

    def trace_view(self, run_id: str, from_seq: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """`trace`, each entry as its JSON object with large values folded: `{"$folded": POINTER,
        "bytes", "preview"}`, POINTER being what `run_value` answers with the whole value."""
        # deferred: the browser's helpers are off the validate cache-hit path (pre-commit)
        from wfops.api.browse import folded_entry

        return [folded_entry(entry) for entry in self.trace(run_id, from_seq=from_seq, limit=limit)]

    def run_graph(self, run_id: str) -> dict[str, Any]:
        """The graph of the workflow a run ran (its stored artifact, not today's file): nodes,
        edges, the top-level steps the run went through and the step it is at (if unfinished)."""
        # deferred: off the validate cache-hit path (findings route) and `runs list`
        from wfops.api.browse import graph_view
        from wfops.compiler.artifact import load_artifact

        with self._store(run_id) as store:
            record = store.get_run(run_id)
            entries: list[dict[str, Any]] = [{"step": e.step, "next": e.next} for e in store.trace(run_id)]
            stored = store.run_workflows(run_id).get(record.snapshot.workflow)
        if stored is None:
            raise UnknownRunError(f"run {run_id!r} has no stored workflow artifact")
        snapshot = record.snapshot
        current = None
        if snapshot.interrupt is not None:
            current = snapshot.interrupt.step
        elif snapshot.status == "running":
            top = [e for e in entries if "/" not in str(e["step"]) and "[" not in str(e["step"])]
            current = (top[-1]["next"] if top else None) or None
        return graph_view(load_artifact(stored[1]), entries, snapshot.status, current)

    def overview(self) -> dict[str, Any]:
        """The project's workflows (description, input schema, graph) and deployments
        (workflow, bindings, input, secrets' names, executor, and each schedule entry with
        its next times and last run, as `schedules()` gives them)."""
        # deferred: the browser's helpers are off the validate cache-hit path (pre-commit)
        from wfops.api.browse import overview

        found = overview(load_project(self.root))
        entries: dict[str, list[dict[str, Any]]] = {}
        for info in self.schedules():
            entries.setdefault(info.deployment, []).append(info.to_dict())
        for deployment in found["deployments"]:
            deployment["schedule"] = entries.get(deployment["name"], [])
        return found

    # -- capabilities and graphs ---------------------------------------------------------
    def capabilities(self, source: str | None = None) -> Capabilities:
        """Every capability (or one source's), with schemas; MCP ones from wfops.lock unless
        `source` names the MCP source (then it is started and listed live)."""
        with self._for_client("listing capabilities"):
            return self._catalog(to_read=True).listing(source)

    def capability(self, ref: str) -> CapabilityInfo:
        """One capability by concrete ref (`<source id>.<name>`)."""
        # deferred: wfops.api.catalog is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.catalog import info

        with self._for_client(f"describing {ref}"):
            source, cap = self._catalog(to_read=True).capability(ref)
        return info(cap, source, "live")

    def call(self, capability_ref: str, input: Any, *,  # noqa: A002 - the contract's word
             timeout: float | None = None, on_ready: Callable[[], None] | None = None) -> CallOutcome:
        """Call one capability (concrete ref) with `input`, checked as a run's step is, within
        `timeout` seconds as a step's `timeout:` (an MCP source's own `timeout:` applies too).
        Raises `CallFailed` (its `error` as a run would record it) when the call fails.
        `on_ready` is told once the sources are loaded and the capability resolved, just
        before the call itself (a server may let other work go on from there)."""
        with self._for_client(f"calling {capability_ref}"):
            return self._catalog().call(capability_ref, input, timeout=timeout, on_ready=on_ready)

    def graph(self, workflow: str, format: str = "mermaid") -> str:  # noqa: A002 - the contract's word
        """A workflow's steps and routes as Mermaid or Graphviz DOT text."""
        # deferred: wfops.report.graph is not needed on the validate cache-hit path (pre-commit)
        from wfops.report.graph import render_graph

        if format not in GRAPH_FORMATS:
            raise UsageError(f"unknown graph format {format!r}", hint="use mermaid or dot")
        loaded = load_project(self.root)
        found = loaded.workflows.get(workflow)
        if found is None:
            broken = [f for f in loaded.broken_files if Path(f).stem == workflow]
            if broken:
                raise WfopsError(f"workflow {workflow!r} ({broken[0]}) does not load",
                                 hint="validate the project to see why")
            known = ", ".join(sorted(loaded.workflows)) or "none"
            raise WfopsError(f"unknown workflow {workflow!r}", hint=f"workflows in this project: {known}")
        return render_graph(found.model, format)

    # -- plumbing ------------------------------------------------------------------------
    @contextmanager
    def _for_client(self, doing: str | None) -> Iterator[None]:
        """For a client's Project: refuse `doing` (something that may start or import sources)
        while a source awaits approval; `None` (validation) runs with held sources not imported."""
        if self._client is None or self._root is None:
            yield
            return
        # deferred: approvals are off the validate cache-hit path (only `wfops mcp` acts for a client)
        import wfops.api.approvals as approvals
        from wfops.sources.registry import holding

        waiting = approvals.held_for(self.root, self._client)
        if doing is not None and waiting:
            raise approvals.SourcesAwaitApproval(waiting, doing)
        with holding(frozenset(d.source for d in waiting)):
            yield

    def _unsaved_sources(self, text: str | None) -> AbstractContextManager[None]:
        """For a client's unsaved sources.yaml text: what it declares anew is not imported either."""
        writes = self._writes()
        if writes is None or text is None:
            return nullcontext()
        # deferred: approvals are off the validate cache-hit path (only `wfops mcp` acts for a client)
        from wfops.api.approvals import sources_text

        return writes.validating(sources_text(self.root), text)

    def _writes(self) -> ClientWrites | None:
        """What a client's write does around a new sources.yaml text (None: a person's write)."""
        if self._client is None:
            return None
        # deferred: approvals are off the validate cache-hit path (only `wfops mcp` acts for a client)
        from wfops.api.approvals import ClientWrites

        return ClientWrites(self.root, self._client)

    def _held_after(self, report: WriteReport) -> WriteReport:
        if self._client is None or self._client.allow_client_sources:
            return report
        # deferred: off a cold validate's path (with inspect, ast, dis); a WriteReport loaded it
        from dataclasses import replace

        # deferred: approvals are off the validate cache-hit path (only `wfops mcp` acts for a client)
        from wfops.api.approvals import held

        return replace(report, awaiting_approval=[d.source for d in held(self.root)])

    def _as_stored(self, snapshot: RunSnapshot, **extra: Any) -> Run:
        """A run just driven, with what the store adds (times, step count, origin)."""
        with self._store(snapshot.run_id) as store:
            record = store.record_of(snapshot)
        return _run_of(record, **extra)

    def _fresh(self) -> None:
        """Forget this project's python modules, so edits count in a long-lived process."""
        if self._root is not None:
            forget_project_modules(self._root)

    def _catalog(self, *, to_read: bool = False) -> Catalog:
        # deferred: wfops.api.catalog is not needed on the validate cache-hit path (pre-commit)
        from wfops.api.catalog import load_catalog

        self._fresh()
        return load_catalog(self.root, to_read=to_read)

    def _stores(self) -> KeptStore:
        # deferred: wfops.store is not needed on the validate cache-hit path (pre-commit)
        from wfops.store.kept import KeptStore

        return self._kept.get("store") or self._kept.setdefault("store", KeptStore())

    def _no_store_yet(self) -> bool:
        """A SQLite file that does not exist yet (a database server is asked, not guessed)."""
        path = self.db_path
        return not is_url(path) and not Path(path).exists()

    @contextmanager
    def _store(self, run_id: str | None = None) -> Iterator[Store]:
        """The store, for reading; one that does not exist yet knows no run (and is not created)."""
        path = self.db_path
        if run_id is not None and self._no_store_yet():
            raise UnknownRunError(f"no run {run_id!r}: there is no store at {path} yet")
        with self._stores().lent(path) as store:
            yield store


def _run_of(record: RunRecord, **extra: Any) -> Run:
    # deferred: cache-hit path, which returns only a Report
    from wfops.api.runs import Run

    return Run.of(record.snapshot, steps=record.steps, created_at=record.created_at,
                  updated_at=record.updated_at, forked_from=_origin(record.meta),
                  unlocked=bool(record.meta.get("unlocked")), **extra)


def _origin(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    origin = meta.get("forked_from")
    return {"run_id": origin.get("run_id"), "step": origin.get("step")} if isinstance(origin, dict) else None


def _slot(store: Store, run_id: str) -> dict[str, str] | None:
    found = store.slot_of(run_id)
    if found is None:
        return None
    return {"deployment": found.slot.deployment, "entry": found.slot.entry, "slot": found.slot.slot}


def _drive(coro: Any) -> Any:
    """Run a coroutine to its end on a fresh event loop in this thread."""
    import asyncio  # deferred: asyncio (~30 ms); `validate` and the run history never need it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise UsageError("wfops.Project methods are synchronous and were called inside a running event loop",
                     hint="call them in a worker thread: await asyncio.to_thread(project.run, ...)")


def validate_files(paths: list[str]) -> Report:
    """Files outside any project, each checked on its own (kind from its place or keys)."""
    # deferred: the validate module is off the record-hit path (a run)
    from wfops.api.validate import validate_standalone

    return Report(validate_standalone(paths), list(paths))


__all__ = ["Project", "validate_files"]

