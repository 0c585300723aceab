"""The PostgreSQL store: one run history shared by every machine that can reach the server.

Same schema (`wfops.store.migrations`), same semantics as the SQLite store: each step
is committed in one transaction before the next starts; a plain step is one
autocommitted INSERT (one round trip). A run's driver holds a session-level advisory
lock on a dedicated connection, so a driver that dies (SIGKILL, lost connection)
releases its run as soon as the server drops that connection.

Every psycopg error leaves here as a one-line `StoreError` (exit 4) whose text went
through `wfops.dburl.redact`: the connection string's password never shows.
"""

from __future__ import annotations

import hashlib
import os
import select
import socket
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from wfops.canonical import canonical_json
from wfops.dburl import display, redact
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import RunBusyError, StoreError, UnknownRunError
from wfops.store.migrations import LATEST, MIGRATIONS, refuse_newer
from wfops.store.protocol import FINISHED, RunRecord
from wfops.store.rows import (
    UNSTORABLE,
    check_text,
    dump,
    interrupt_dict,
    load,
    now,
    record,
    stamp,
    unstorable,
)

DEFAULT_TIMEOUT = 10.0
_MAX = 2**63 - 1
# pg_advisory_xact_lock key serializing schema migrations of one database ("wfops-mi").
_MIGRATION_KEY = int.from_bytes(b"wfops-mi", "big") >> 1
# Artifacts are shared by runs: creating runs takes this key shared, deleting unreferenced
# artifacts takes it exclusively, so a new run never refers to an artifact being deleted.
_ARTIFACTS_KEY = int.from_bytes(b"wfops-ar", "big") >> 1
# A dead client on a half-open TCP connection (a runner whose network vanished) is
# noticed by the server after idle + interval * count seconds; its run lock goes then.
_KEEPALIVE = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3"}

_INSERT_TRACE = ("INSERT INTO trace (run_id, seq, step, kind, attempt, input, outcome, output, "
                 "state_changes, next, error, started_at, ended_at, cursor) "
                 "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")

# While a run is running, its newest cursor, step count and time may live in the trace
# (see `commit`); once it stops, the run row holds them.
_RUN_COLUMNS = (
    "r.id, r.deployment, r.workflow, r.artifact, r.status, r.outcome, r.output, r.error, r.interrupt, "
    "COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id = r.id AND t.seq > r.cursor_seq "
    "AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), r.cursor), "
    "CASE WHEN r.status = 'running' THEN (SELECT count(*) FROM trace t WHERE t.run_id = r.id) "
    "ELSE r.steps END, r.created_at, "
    "CASE WHEN r.status = 'running' THEN GREATEST(r.updated_at, COALESCE((SELECT t.ended_at FROM trace t "
    "WHERE t.run_id = r.id ORDER BY t.seq DESC LIMIT 1), '')) ELSE r.updated_at END, "
    "i.input, i.meta")
_SELECT_RUNS = f"SELECT {_RUN_COLUMNS} FROM runs r LEFT JOIN run_inputs i ON i.run_id = r.id"

_Head = tuple[str, str | None, str | None, str | None, str | None]


def lock_key(run_id: str) -> int:
    """The run's advisory lock key: 63 bits of a hash, the same on every machine."""
    digest = hashlib.blake2b(f"wfops-run:{run_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class PostgresStore:
    def __init__(self, url: str, *, timeout: float | None = None) -> None:
        self.url = url
        self.name = display(url)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._pending: dict[str, tuple[dict[str, str], dict[str, Mapping[str, Any]], dict[str, Any]]] = {}
        self._heads: dict[str, _Head] = {}
        self._locks: dict[str, psycopg.Connection[Any]] = {}  # run id -> the connection holding its lock
        with self._errors("connect"):
            self.conn = self._connect("wfops")
        try:
            with self._errors("open"):
                self._migrate()
        except BaseException:
            self.close()  # a refused store (newer schema, no rights) leaves no session behind
            raise

    # -- connections and errors ---------------------------------------------------------

    def _connect(self, application: str, *, own_name: bool = False) -> psycopg.Connection[Any]:
        """A new autocommit session. The URL's own `application_name` / `connect_timeout` win,
        except for a lock connection (`own_name`), whose name tells who holds a run."""
        given = conninfo_to_dict(self.url)
        extra: dict[str, Any] = {}
        if own_name or "application_name" not in given:
            extra["application_name"] = application
        if "connect_timeout" not in given:
            extra["connect_timeout"] = max(2, round(self.timeout))
        conn = psycopg.connect(self.url, autocommit=True, **extra)
        try:
            # Waiting for another writer's lock is bounded as on SQLite (WFOPS_DB_TIMEOUT).
            conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(self.timeout * 1000)}ms",))
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            raise StoreError(self._describe(exc, doing), hint=self._hint(exc)) from None

    def _describe(self, exc: psycopg.Error, doing: str) -> str:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        text = redact(lines[0] if lines else type(exc).__name__, self.url)
        where = f"store {self.name}"
        if self._lost(exc):
            return (f"{where}: the connection to the server was lost while trying to {doing}; "
                    f"every step committed before is kept ({text})")
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return f"{where} is locked by another process (waited {self.timeout:g} s to {doing})"
        return f"{where}: cannot {doing}: {text}"

    def _lost(self, exc: psycopg.Error) -> bool:
        conn = getattr(self, "conn", None)
        return isinstance(exc, psycopg.OperationalError) and conn is not None and conn.broken

    def _hint(self, exc: psycopg.Error) -> str | None:
        if self._lost(exc):
            return "`wfops resume RUN_ID` continues the run from its last committed step"
        if isinstance(exc, psycopg.OperationalError) and getattr(self, "conn", None) is None:
            return "check that the server is up and the URL (host, port, database, user) is right"
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return "another wfops holds a long write; retry, or raise WFOPS_DB_TIMEOUT"
        return None

    # -- schema -------------------------------------------------------------------------

    def _version(self) -> int:
        if self.conn.execute("SELECT to_regclass('schema_version')").fetchone() == (None,):
            return 0
        row = self.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0) if row else 0

    def _migrate(self) -> None:
        """Bring the schema to `LATEST` in one transaction; processes starting at once
        queue on a transaction-level advisory lock, and all but the first find it done."""
        version = self._version()
        refuse_newer(version, self.name)
        if version == LATEST:
            return
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_KEY,))
            self.conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                              "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            version = self._version()
            refuse_newer(version, self.name)
            for migration in MIGRATIONS:
                if migration.version <= version:
                    continue
                for statement in migration.statements("postgres"):
                    self.conn.execute(statement.encode())
                self.conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (migration.version, now()))

    # -- writes -------------------------------------------------------------------------

    def begin_run(self, run_id: str, *, artifacts: Mapping[str, str],
                  normalized: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any]) -> None:
        self._pending[run_id] = (dict(artifacts), dict(normalized), dict(meta))

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        try:
            head: _Head = (run.status, run.outcome, dump(run.output), dump(run.error),
                           dump(interrupt_dict(run.interrupt)))
            cursor = dump(run.cursor) or "{}"
            # As on SQLite: a plain step is ONE row insert carrying the cursor; here it is also
            # one round trip, since a single statement in autocommit mode is its own transaction.
            light = bool(entries) and self._heads.get(run.run_id) == head
            last = max(e.seq for e in entries) if entries else None
            rows = [(run.run_id, e.seq, e.step, e.kind, e.attempt, dump(e.input), e.outcome,
                     dump(e.output), dump(e.state_changes) or "[]", e.next, dump(e.error),
                     e.started_at, e.ended_at, cursor if light and e.seq == last else None)
                    for e in entries]
            check_text([*rows, head])
        except UNSTORABLE as exc:
            raise unstorable(run.run_id, exc) from None
        self._still_held(run.run_id)
        with self._errors("commit a step"):
            if light and len(rows) == 1:
                self.conn.execute(_INSERT_TRACE, rows[0])
            else:
                with self.conn.transaction(), self.conn.cursor() as cur:
                    if not light:
                        self._commit_head(cur, run, head, cursor)
                    cur.executemany(_INSERT_TRACE, rows)
                    if not light:
                        cur.execute("UPDATE runs SET cursor_seq=(SELECT COALESCE(MAX(seq), 0) FROM trace "
                                    "WHERE run_id=%(id)s), steps=(SELECT count(*) FROM trace "
                                    "WHERE run_id=%(id)s) WHERE id=%(id)s", {"id": run.run_id})
        self._heads[run.run_id] = head
        self._pending.pop(run.run_id, None)

    def _commit_head(self, cur: psycopg.Cursor[Any], run: RunSnapshot, head: _Head, cursor: str) -> None:
        moment = now()
        pending = self._pending.get(run.run_id)
        if pending is not None:
            self._insert_run(cur, run, moment, *pending, new=True)
        elif run.run_id not in self._heads:  # first commit of this process: a resume, or no begin_run
            self._insert_run(cur, run, moment, {}, {}, {}, new=False)
        cur.execute(
            "UPDATE runs SET status=%(status)s, outcome=%(outcome)s, output=%(output)s, error=%(error)s, "
            "interrupt=%(interrupt)s, cursor=%(cursor)s, updated_at=%(stamp)s WHERE id=%(id)s",
            {"status": head[0], "outcome": head[1], "output": head[2], "error": head[3],
             "interrupt": head[4], "cursor": cursor, "stamp": moment, "id": run.run_id})
        if cur.rowcount == 0:
            raise StoreError(f"store {self.name}: run {run.run_id} was removed while it ran")

    def _insert_run(self, cur: psycopg.Cursor[Any], run: RunSnapshot, moment: str,
                    artifacts: Mapping[str, str], normalized: Mapping[str, Mapping[str, Any]],
                    meta: Mapping[str, Any], *, new: bool) -> None:
        """Create the run's rows. A `new` run whose id is taken fails: two runs never mix."""
        self._put_artifacts(cur, run.run_id, {run.workflow: run.artifact, **artifacts}, normalized)
        cur.execute("INSERT INTO run_inputs VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    (run.run_id, dump(run.input) or "null", dump(meta) or "{}"))
        cur.execute(
            "INSERT INTO runs (id, deployment, workflow, artifact, status, outcome, output, "
            "error, interrupt, cursor, steps, cursor_seq, created_at, updated_at) "
            f"VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,0,%s,%s){'' if new else ' ON CONFLICT DO NOTHING'}",
            (run.run_id, run.deployment, run.workflow, run.artifact, run.status, run.outcome,
             dump(run.output), dump(run.error), dump(interrupt_dict(run.interrupt)),
             dump(run.cursor) or "{}", moment, moment))

    @staticmethod
    def _put_artifacts(cur: psycopg.Cursor[Any], run_id: str, artifacts: Mapping[str, str],
                       normalized: Mapping[str, Mapping[str, Any]]) -> None:
        cur.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_ARTIFACTS_KEY,))
        # Sorted: two runs inserting the same artifacts take their index entries in one order
        # (no deadlock between concurrent first commits).
        cur.executemany("INSERT INTO artifacts VALUES (%s, %s) ON CONFLICT DO NOTHING",
                        [(h, canonical_json(normalized[h])) for h in sorted(normalized)])
        cur.executemany("INSERT INTO run_artifacts VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        [(run_id, name, artifacts[name]) for name in sorted(artifacts)])

    def import_run(self, run: RunRecord, entries: list[TraceEntry],
                   workflows: Mapping[str, tuple[str, Mapping[str, Any]]]) -> bool:
        snap = run.snapshot
        with self._errors("copy a run"), self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute(
                "INSERT INTO runs (id, deployment, workflow, artifact, status, outcome, output, error, "
                "interrupt, cursor, steps, cursor_seq, created_at, updated_at) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                (snap.run_id, snap.deployment, snap.workflow, snap.artifact, snap.status, snap.outcome,
                 dump(snap.output), dump(snap.error), dump(interrupt_dict(snap.interrupt)),
                 dump(snap.cursor) or "{}", len(entries), max((e.seq for e in entries), default=0),
                 run.created_at, run.updated_at))
            if cur.rowcount == 0:
                return False  # already there: copying twice adds nothing
            self._put_artifacts(cur, snap.run_id, {n: h for n, (h, _a) in workflows.items()},
                                {h: a for h, a in workflows.values()})
            cur.execute("INSERT INTO run_inputs VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        (snap.run_id, dump(snap.input) or "null", dump(dict(run.meta)) or "{}"))
            cur.executemany(_INSERT_TRACE, [
                (snap.run_id, e.seq, e.step, e.kind, e.attempt, dump(e.input), e.outcome, dump(e.output),
                 dump(e.state_changes) or "[]", e.next, dump(e.error), e.started_at, e.ended_at, None)
                for e in entries])
        return True

    def delete_run(self, run_id: str) -> None:
        with self._errors("delete a run"), self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SELECT 1 FROM runs WHERE id=%s FOR UPDATE", (run_id,))
            if cur.fetchone() is None:
                raise UnknownRunError(f"no run {run_id!r} in {self.name}")
            self._delete(cur, [run_id])

    def prune(self, older_than_days: float) -> int:
        cutoff = stamp(datetime.now(UTC) - timedelta(days=older_than_days))
        with self._errors("prune runs"), self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SELECT id FROM runs WHERE status = ANY(%s) AND updated_at < %s FOR UPDATE",
                        (list(FINISHED), cutoff))
            ids = [r[0] for r in cur.fetchall()]
            self._delete(cur, ids)
        return len(ids)

    @staticmethod
    def _delete(cur: psycopg.Cursor[Any], ids: list[str]) -> None:
        if not ids:
            return
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ARTIFACTS_KEY,))  # taken first: no lock-order cycle
        for table, column in (("trace", "run_id"), ("run_artifacts", "run_id"), ("run_inputs", "run_id"),
                              ("cancel_requests", "run_id"), ("runs", "id")):
            cur.execute(f"DELETE FROM {table} WHERE {column} = ANY(%s)", (ids,))
        # Artifacts no run refers to any more go too; they are rebuilt by the next run.
        cur.execute("DELETE FROM artifacts a WHERE NOT EXISTS "
                    "(SELECT 1 FROM run_artifacts ra WHERE ra.hash = a.hash)")

    # -- cancel and fork ----------------------------------------------------------------

    def request_cancel(self, run_id: str) -> None:
        with self._errors("request a cancel"):
            self.conn.execute("INSERT INTO cancel_requests VALUES (%s, %s) ON CONFLICT DO NOTHING", (run_id, now()))

    def cancel_requested(self, run_id: str) -> bool:
        with self._errors("read cancel requests"):
            return self.conn.execute("SELECT 1 FROM cancel_requests WHERE run_id=%s", (run_id,)).fetchone() is not None

    def clear_cancel(self, run_id: str) -> None:
        with self._errors("clear a cancel request"):
            self.conn.execute("DELETE FROM cancel_requests WHERE run_id=%s", (run_id,))

    def mark_cancelled(self, run_id: str) -> None:
        with self._errors("cancel a run"), self.conn.transaction(), self.conn.cursor() as cur:
            # The newest cursor may ride on a trace row (see `commit`): keep it on the run row.
            cur.execute("UPDATE runs SET status='cancelled', interrupt=NULL, updated_at=%(stamp)s, "
                        "cursor=COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id=%(id)s "
                        "AND t.seq > runs.cursor_seq AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), cursor), "
                        "cursor_seq=(SELECT COALESCE(MAX(seq), 0) FROM trace WHERE run_id=%(id)s), "
                        "steps=(SELECT count(*) FROM trace WHERE run_id=%(id)s) WHERE id=%(id)s",
                        {"id": run_id, "stamp": now()})
            cur.execute("DELETE FROM cancel_requests WHERE run_id=%s", (run_id,))
        self._heads.pop(run_id, None)

    def fork_run(self, source_id: str, new_id: str, *, upto_seq: int, input: Any,
                 meta: Mapping[str, Any]) -> None:
        source = self.get_run(source_id).snapshot
        moment = now()
        with self._errors("fork a run"), self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_ARTIFACTS_KEY,))  # as a run's first commit
            cur.execute("INSERT INTO runs (id, deployment, workflow, artifact, status, cursor, steps, cursor_seq, "
                        "created_at, updated_at) VALUES (%s,%s,%s,%s,'running',%s,0,0,%s,%s)",
                        (new_id, source.deployment, source.workflow, source.artifact,
                         dump({"seq": upto_seq, "step": None}), moment, moment))
            cur.execute("INSERT INTO run_inputs VALUES (%s, %s, %s)", (new_id, dump(input) or "null", dump(meta) or "{}"))
            cur.execute("INSERT INTO run_artifacts SELECT %s, workflow, hash FROM run_artifacts WHERE run_id=%s",
                        (new_id, source_id))
            cur.execute("INSERT INTO trace (run_id, seq, step, kind, attempt, input, outcome, output, state_changes, "
                        "next, error, started_at, ended_at, cursor) SELECT %s, seq, step, kind, attempt, input, "
                        "outcome, output, state_changes, next, error, started_at, ended_at, NULL FROM trace "
                        "WHERE run_id=%s AND seq <= %s", (new_id, source_id, upto_seq))
            cur.execute("UPDATE runs SET cursor_seq=(SELECT COALESCE(MAX(seq), 0) FROM trace WHERE run_id=%(id)s), "
                        "steps=(SELECT count(*) FROM trace WHERE run_id=%(id)s) WHERE id=%(id)s", {"id": new_id})

    # -- reads --------------------------------------------------------------------------

    def get_run(self, run_id: str) -> RunRecord:
        with self._errors("read a run"):
            row = self.conn.execute(f"{_SELECT_RUNS} WHERE r.id=%s", (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(f"no run {run_id!r} in {self.name}",
                                  hint="`wfops runs list` shows the stored runs")
        return record(row)

    def list_runs(self, *, deployment: str | None = None, status: str | None = None,
                  limit: int = 20) -> list[RunRecord]:
        where, args = [], []
        if deployment is not None:
            where.append("r.deployment = %s")
            args.append(deployment)
        if status is not None:
            where.append("r.status = %s")
            args.append(status)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        # No rowid here: the id (a UTC time, then randomness) orders runs of the same instant.
        with self._errors("list runs"):
            rows = self.conn.execute(f"{_SELECT_RUNS} {clause} ORDER BY r.created_at DESC, r.id DESC "
                                     "LIMIT %s", (*args, _clamp(limit))).fetchall()
        return [record(row) for row in rows]

    def trace(self, run_id: str, *, from_seq: int | None = None,
              limit: int | None = None) -> list[TraceEntry]:
        self.get_run(run_id)
        with self._errors("read a trace"):
            rows = self.conn.execute(
                "SELECT seq, step, kind, attempt, input, outcome, output, state_changes, next, error, "
                "started_at, ended_at FROM trace WHERE run_id=%s AND seq >= %s ORDER BY seq LIMIT %s",
                (run_id, _clamp(from_seq if from_seq is not None else -1),
                 None if limit is None or limit < 0 else _clamp(limit))).fetchall()
        return [TraceEntry(seq=r[0], step=r[1], kind=r[2], attempt=r[3], input=load(r[4]),
                           outcome=r[5], output=load(r[6]), state_changes=load(r[7]) or [],
                           next=r[8], error=load(r[9]), started_at=r[10], ended_at=r[11])
                for r in rows]

    def run_workflows(self, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
        self.get_run(run_id)
        with self._errors("read artifacts"):
            rows = self.conn.execute(
                "SELECT ra.workflow, ra.hash, a.normalized FROM run_artifacts ra "
                "LEFT JOIN artifacts a ON a.hash = ra.hash WHERE ra.run_id=%s", (run_id,)).fetchall()
        missing = [name for name, _h, text in rows if text is None]
        if missing:
            raise StoreError(f"store {self.name} lacks the artifact of workflow(s) {', '.join(missing)} "
                             f"for run {run_id}")
        return {name: (h, load(text)) for name, h, text in rows}

    # -- locks and lifetime -------------------------------------------------------------

    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        return self._run_lock(run_id)

    @contextmanager
    def _run_lock(self, run_id: str) -> Iterator[None]:
        """Hold the run's advisory lock on a connection of its own, or raise `RunBusyError` at once.

        The lock lives exactly as long as that connection: closing it (or the process
        dying, or the server dropping it) frees the run."""
        key = lock_key(run_id)
        with self._errors("take the run's lock"):
            conn = self._connect(f"wfops driver pid {os.getpid()} on {socket.gethostname()}"[:63], own_name=True)
        try:
            with self._errors("take the run's lock"):
                for name, value in _KEEPALIVE.items():
                    conn.execute("SELECT set_config(%s, %s, false)", (name, value))
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                if not row or not row[0]:
                    holder = self._holder(conn, key)
                    raise RunBusyError(f"run {run_id} is being driven by another process{holder}",
                                       hint="wait for it to finish, or stop that process first")
            self._locks[run_id] = conn
            yield
        finally:
            if self._locks.pop(run_id, None) is not None:
                with suppress(psycopg.Error):
                    # Released before the connection closes: a close does not wait for the
                    # server's backend to exit, and the next reader must find the run free.
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            with suppress(psycopg.Error):
                conn.close()

    def _still_held(self, run_id: str) -> None:
        """Stop before a commit when the connection holding the run's lock was dropped
        (server restart, pg_terminate_backend): the run may already have a new driver.

        An idle session receives nothing unless the server ends it, so a readable socket
        is the only case that costs a round trip; otherwise this is one poll (~1 us)."""
        conn = self._locks.get(run_id)
        if conn is None:
            return
        readable, _w, _x = select.select([conn.fileno()], [], [], 0)
        if not readable:
            return
        try:
            conn.execute("SELECT 1")
        except psycopg.Error:
            raise StoreError(f"store {self.name}: the connection holding run {run_id}'s lock was lost; "
                             "stopping before the next commit, so that no two processes drive the run "
                             "(every step committed before is kept)",
                             hint=f"`wfops resume {run_id}` continues the run from its last committed step") from None

    @staticmethod
    def _holder_query() -> str:
        return ("SELECT l.pid, a.application_name FROM pg_locks l "
                "LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND l.classid::bigint = %s AND l.objid::bigint = %s")

    def _holder(self, conn: psycopg.Connection[Any], key: int) -> str:
        row = conn.execute(self._holder_query(), (key >> 32, key & 0xFFFFFFFF)).fetchone()
        if row is None:
            return ""
        backend, application = row
        prefix = "wfops driver "
        if application and application.startswith(prefix):
            return f" ({application[len(prefix):]})"
        return f" (server backend pid {backend})"

    def run_is_driven(self, run_id: str) -> bool:
        key = lock_key(run_id)
        with self._errors("read the run's lock"):
            row = self.conn.execute(self._holder_query(), (key >> 32, key & 0xFFFFFFFF)).fetchone()
        return row is not None

    def close(self) -> None:
        with suppress(psycopg.Error):
            self.conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clamp(value: int) -> int:
    """PostgreSQL bigints: a larger --from/--limit means "all", not an overflow error."""
    return max(-_MAX - 1, min(int(value), _MAX))
