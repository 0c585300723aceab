"""The SQLite store: WAL, synchronous=NORMAL, every write one transaction that takes the write
lock first: `BEGIN IMMEDIATE`, or a plain step's one autocommitted INSERT.

NORMAL survives process crashes (SIGKILL) but not power loss; see
docs/runs-and-durability.md. Every sqlite error leaves here as a one-line
`StoreError` (exit 4). An existing store on a medium wfops cannot write (a read-only
mount, a snapshot) is opened read-only: the history reads, and a write fails as
"read-only".
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

from wfops.atomic import disk_full, is_disk_full
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import StoreError, UsageError
from wfops.statedir import make_state_dir, refuse_state_link
from wfops.store import locks
from wfops.store.base import DEFAULT_TIMEOUT, SqlStore, TraceRow, Writes
from wfops.store.migrations import LATEST, current_version, migrate, refuse_newer
from wfops.store.queries import GROUP_ROWS, RUN_TABLES, SQLITE, group_insert, queries
from wfops.store.rows import UNSTORABLE, unstorable


class SqliteStore(SqlStore):
    _q = queries(SQLITE)
    conn: sqlite3.Connection
    _hot: sqlite3.Cursor
    _failures = (sqlite3.Error, OSError)
    _binding_checks_text = True  # sqlite3 encodes every str parameter to UTF-8 as it binds it

    def __init__(self, path: Path, *, timeout: float | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.name = str(self.path)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.lock_dir = self.path.parent / "locks"
        self.read_only = False
        with self._errors("open"):
            make_state_dir(self.path.parent)
            refuse_state_link(self.path)  # `.wfops/wfops.db` itself a link
            self.conn = self._connect(self.path)
        with self._errors("open"):
            try:
                self._read_schema()
            except sqlite3.OperationalError as exc:
                if not self._on_read_only_medium(exc):
                    raise
                self._open_read_only()
            refuse_newer(current_version(self.conn), str(self.path))
            if self.read_only:
                self._refuse_stale_schema()
                self._hot = self.conn.cursor()
                return
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            migrate(self.conn, str(self.path))
        # The cursor a plain step's commit runs on, made once: `Connection.execute` makes one
        # per statement.
        self._hot = self.conn.cursor()

    def _connect(self, target: Path | str, *, uri: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=self.timeout, isolation_level=None, check_same_thread=False,
                               uri=uri)
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        return conn

    def _read_schema(self) -> None:
        # Reading the schema first: a non-database file or a newer schema fails here,
        # before any pragma could write to it.
        self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()

    # -- a read-only medium -------------------------------------------------------------

    def _on_read_only_medium(self, exc: sqlite3.OperationalError) -> bool:
        """Whether the first read failed because the store's directory or file cannot be
        written: a WAL database then cannot get its `-shm` file on an ordinary open."""
        text = str(exc)
        if "unable to open" not in text and "readonly" not in text:
            return False
        if not self.path.is_file():
            return False  # nothing to read: the ordinary "cannot be opened" stands
        return not os.access(self.path.parent, os.W_OK) or not os.access(self.path, os.W_OK) \
            or _read_only_mount(self.path.parent)

    def _open_read_only(self) -> None:
        """`mode=ro` first: it still sees a `-wal` a crashed writer left. Where even that cannot
        be read (no `-shm` beside the file, none can be made), `immutable=1`: SQLite then
        takes the file as it is, which a medium nobody can write is."""
        self.conn.close()
        base = self.path.resolve().as_uri()
        self.conn = self._connect(f"{base}?mode=ro", uri=True)
        try:
            self._read_schema()
        except sqlite3.OperationalError:
            self.conn.close()
            self.conn = self._connect(f"{base}?mode=ro&immutable=1", uri=True)
            self._read_schema()
        self.read_only = True

    def _refuse_stale_schema(self) -> None:
        version = current_version(self.conn)
        if version < LATEST:
            raise StoreError(f"store {self.path} is read-only and older than this wfops (schema {version}, "
                             f"this wfops reads {LATEST})",
                             hint="open it once where it can be written (wfops upgrades it), or use the "
                                  "wfops that wrote it")

    # -- errors -------------------------------------------------------------------------

    def _failure(self, exc: Exception, doing: str) -> StoreError:
        if isinstance(exc, OSError):
            if is_disk_full(exc):
                return disk_full(f"store {self.path}", doing)
            return StoreError(f"store {self.path}: cannot {doing}: {exc.strerror or exc}")
        assert isinstance(exc, sqlite3.Error)  # the other of `_failures`
        if "full" in str(exc):
            return disk_full(f"store {self.path}", doing)
        return StoreError(self._describe(exc, doing), hint=self._hint(exc))

    def _describe(self, exc: sqlite3.Error, doing: str) -> str:
        text = str(exc)
        where = f"store {self.path}"
        if "locked" in text or "busy" in text:
            return f"{where} is locked by another process (waited {self.timeout:g} s to {doing})"
        if "not a database" in text or "malformed" in text:
            return f"{where} is not a valid wfops database (corrupt or another kind of file)"
        if "readonly" in text or "read-only" in text:
            return f"{where} is read-only; cannot {doing}"
        if "unable to open" in text:
            return f"{where} cannot be opened (missing directory or no permission)"
        return f"{where}: cannot {doing}: {text}"

    @staticmethod
    def _hint(exc: sqlite3.Error) -> str | None:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return "another wfops holds a long write; retry, or raise WFOPS_DB_TIMEOUT"
        if "not a database" in text or "malformed" in text:
            return "move the file aside (wfops will create a fresh store) or point --db elsewhere"
        return None

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with BEGIN IMMEDIATE so it can never deadlock."""
        with self._errors(doing):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    # -- writes -------------------------------------------------------------------------

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        if len(entries) > 1:
            group = self._group_rows(run, entries)
            if group is not None:
                self._commit_group(run, *group)
                return
        plain = self._plain_row(run, entries[0]) if len(entries) == 1 else None
        if plain is not None:  # one row: two statements fewer per step, and the same row
            self._alone(run, self._q.insert_plain_trace, plain)
            return
        head, cursor, light, rows = self._step_rows(run, entries)
        db = self.conn
        # Inlined `_transaction`: this is the hot path, once per step.
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if not light:
                    self._commit_head(db, run, head, cursor)
                if len(rows) == 1:  # a step's one entry: `executemany` costs a microsecond more
                    db.execute(self._q.insert_trace, rows[0])
                else:
                    db.executemany(self._q.insert_trace, rows)
                if any(e.cache_note is not None for e in entries):
                    self._write_cache(db, run, entries)
                if not light:
                    self._finish_head(db, run.run_id)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._failure(exc, "commit a step") from None
        except UNSTORABLE as exc:  # the run's input or meta, written with its first commit
            raise unstorable(run.run_id, exc) from None
        self._committed(run.run_id, head)

    def _commit_group(self, run: RunSnapshot, bare: list[TraceRow], newest: TraceRow | None,
                      full: list[TraceRow]) -> None:
        """A plain group's rows (`_group_rows`) in one transaction on the kept cursor. The run
        row is left alone, as a plain step leaves it: the cursor rides on the newest entry's
        row. The plain rows go in multi-row INSERTs (`group_insert`), the newest row last; a
        group that is one such statement is sent alone, a transaction of its own."""
        hot, q = self._hot, self._q
        plain: list[TraceRow] = bare if newest is None else [*bare, newest]
        if not full and len(plain) <= GROUP_ROWS:  # ONE statement, as a plain step's row is written
            self._alone(run, group_insert(len(plain), newest is not None), list(chain.from_iterable(plain)))
            return
        try:
            hot.execute("BEGIN IMMEDIATE")
            try:
                for first in range(0, len(plain), GROUP_ROWS):
                    part = plain[first:first + GROUP_ROWS]
                    last = newest is not None and first + GROUP_ROWS >= len(plain)
                    hot.execute(group_insert(len(part), last), list(chain.from_iterable(part)))
                if full:
                    hot.executemany(q.insert_trace, full)
                hot.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    hot.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._failure(exc, "commit a step") from None
        except UNSTORABLE as exc:  # a lone surrogate, refused as it is bound: the group rolled back
            raise unstorable(run.run_id, exc) from None

    def _alone(self, run: RunSnapshot, statement: str, values: Sequence[Any]) -> None:
        """A commit that is one statement, sent outside BEGIN: a transaction of its own
        (autocommit), which takes the write lock as BEGIN IMMEDIATE does, waiting
        `busy_timeout` for it, and is durable when it returns."""
        try:
            self._hot.execute(statement, values)
        except sqlite3.Error as exc:
            raise self._failure(exc, "commit a step") from None
        except UNSTORABLE as exc:  # a lone surrogate, refused as it is bound: nothing was written
            raise unstorable(run.run_id, exc) from None

    def _share_artifacts(self, tx: Writes) -> None:
        return None  # BEGIN IMMEDIATE already keeps every other writer out

    def _delete(self, tx: Writes, ids: list[str]) -> None:
        rows = [(i,) for i in ids]
        for table, column in RUN_TABLES:
            tx.executemany(f"DELETE FROM {table} WHERE {column}=?", rows)
        # Artifacts no run refers to any more go too; they are rebuilt by the next run.
        tx.execute("DELETE FROM artifacts WHERE hash NOT IN (SELECT hash FROM run_artifacts)")

    # -- locks and lifetime -------------------------------------------------------------

    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        if self.read_only:  # said before the lock file, which cannot be made there either
            raise StoreError(f"store {self.path} is read-only; cannot drive a run",
                             hint="copy the store where it can be written, or point --db / WFOPS_DB there")
        return locks.run_lock(self.lock_dir, run_id, where=f"store {self.path}")

    def run_is_driven(self, run_id: str) -> bool:
        return locks.is_locked(self.lock_dir, run_id)

    def close(self) -> None:
        with self._errors("close"):
            self.conn.close()


#: The longest wait `WFOPS_DB_TIMEOUT` may ask for: one day (SQLite counts it in a C int of
#: milliseconds, which ends near 24.8 days; `1e400` would overflow it).
MAX_TIMEOUT = 86_400


def _read_only_mount(directory: Path) -> bool:
    """Whether `directory` is on a file system mounted read-only (which `os.access` does
    not tell root)."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def env_timeout() -> float | None:
    """`WFOPS_DB_TIMEOUT` in seconds, or None when unset; anything but a number from 0 to
    `MAX_TIMEOUT` is a `UsageError`."""
    value = os.environ.get("WFOPS_DB_TIMEOUT")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_TIMEOUT:  # NaN fails both
        raise UsageError(f"WFOPS_DB_TIMEOUT={value[:40]!r} is not a number of seconds from 0 to {MAX_TIMEOUT:,}",
                         hint="unset it for the default (10 s)")
    return seconds

