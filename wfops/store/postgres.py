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
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from wfops.dburl import display, redact
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import RunBusyError, StoreError
from wfops.store.base import DEFAULT_TIMEOUT, SqlStore, Writes
from wfops.store.migrations import LATEST, MIGRATIONS, refuse_newer
from wfops.store.queries import POSTGRES, RUN_TABLES, queries
from wfops.store.rows import UNSTORABLE, now, unstorable

# pg_advisory_xact_lock key serializing schema migrations of one database ("wfops-mi").
_MIGRATION_KEY = int.from_bytes(b"wfops-mi", "big") >> 1
# Artifacts are shared by runs: creating runs takes this key shared, deleting unreferenced
# artifacts takes it exclusively, so a new run never refers to an artifact being deleted.
_ARTIFACTS_KEY = int.from_bytes(b"wfops-ar", "big") >> 1
# A dead client on a half-open TCP connection (a runner whose network vanished) is
# noticed by the server after idle + interval * count seconds; its run lock goes then.
_KEEPALIVE = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3"}


def lock_key(run_id: str) -> int:
    """The run's advisory lock key: 63 bits of a hash, the same on every machine."""
    digest = hashlib.blake2b(f"wfops-run:{run_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class PostgresStore(SqlStore):
    _q = queries(POSTGRES)
    conn: psycopg.Connection[Any]
    _failures = (psycopg.Error,)

    def __init__(self, url: str, *, timeout: float | None = None) -> None:
        super().__init__()
        self.url = url
        self.name = display(url)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
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

    def _failure(self, exc: Exception, doing: str) -> StoreError:
        assert isinstance(exc, psycopg.Error)  # the only one of `_failures`
        if self._lost(exc):  # the run's steps are kept: the runner's hint says how to resume it
            return StoreError(self._describe(exc, doing), remedy="check that the server is up")
        return StoreError(self._describe(exc, doing), hint=self._hint(exc))

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

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[psycopg.Cursor[Any]]:
        with self._errors(doing), self.conn.transaction(), self.conn.cursor() as cur:
            yield cur

    @contextmanager
    def _statement(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        # In autocommit mode a single statement is its own transaction: one round trip.
        with self._errors(doing):
            yield self.conn

    # -- writes -------------------------------------------------------------------------

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        # As on SQLite a plain step is ONE row insert carrying the cursor; here it is also
        # one round trip, since a single statement in autocommit mode is its own transaction.
        head, cursor, light, rows = self._step_rows(run, entries)
        self._still_held(run.run_id)
        try:
            with self._errors("commit a step"):
                noted = any(e.cache_note is not None for e in entries)
                if light and len(rows) == 1 and not noted:
                    self.conn.execute(self._q.insert_trace, rows[0])
                else:
                    with self.conn.transaction(), self.conn.cursor() as cur:
                        if not light:
                            self._commit_head(cur, run, head, cursor)
                        cur.executemany(self._q.insert_trace, rows)
                        if noted:
                            self._write_cache(cur, run, entries)
                        if not light:
                            self._finish_head(cur, run.run_id)
        except UNSTORABLE as exc:  # the run's input or meta, written with its first commit (as on SQLite)
            raise unstorable(run.run_id, exc) from None
        self._committed(run.run_id, head)

    def _share_artifacts(self, tx: Writes) -> None:
        tx.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_ARTIFACTS_KEY,))

    def _delete(self, tx: Writes, ids: list[str]) -> None:
        if not ids:
            return
        tx.execute("SELECT pg_advisory_xact_lock(%s)", (_ARTIFACTS_KEY,))  # taken first: no lock-order cycle
        for table, column in RUN_TABLES:
            tx.execute(f"DELETE FROM {table} WHERE {column} = ANY(%s)", (ids,))
        # Artifacts no run refers to any more go too; they are rebuilt by the next run.
        tx.execute("DELETE FROM artifacts a WHERE NOT EXISTS "
                   "(SELECT 1 FROM run_artifacts ra WHERE ra.hash = a.hash)")

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
                             remedy="check that the server is up") from None

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
