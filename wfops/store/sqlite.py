"""The SQLite store: WAL, synchronous=NORMAL, every write in `BEGIN IMMEDIATE`.

NORMAL survives process crashes (SIGKILL) but not power loss; see
docs/runs-and-durability.md. Every sqlite error leaves here as a one-line
`StoreError` (exit 4).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from wfops.atomic import disk_full, is_disk_full
from wfops.canonical import canonical_json
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import StoreError, UnknownRunError
from wfops.statedir import make_state_dir
from wfops.store import locks
from wfops.store.migrations import current_version, migrate, refuse_newer
from wfops.store.protocol import FINISHED, RunRecord
from wfops.store.rows import UNSTORABLE, check_text, now, stamp, unstorable
from wfops.store.rows import dump as _dump
from wfops.store.rows import interrupt_dict as _interrupt_dict
from wfops.store.rows import load as _load
from wfops.store.rows import record as _record

DEFAULT_TIMEOUT = 10.0  # seconds a writer waits for another writer's transaction


_INSERT_TRACE = ("INSERT INTO trace (run_id, seq, step, kind, attempt, input, outcome, output, "
                 "state_changes, next, error, started_at, ended_at, cursor) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")


class _Pending(NamedTuple):
    """What `begin_run` was given, written with the run's first commit."""

    artifacts: dict[str, str]
    normalized: dict[str, Mapping[str, Any]]
    meta: dict[str, Any]


#: What a run row says (status, outcome, and the JSON of output, error and interrupt).
_Head = tuple[str, str | None, str | None, str | None, str | None]


class SqliteStore:
    def __init__(self, path: Path, *, timeout: float | None = None) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.lock_dir = self.path.parent / "locks"
        # Artifacts and inputs are written with a run's first commit, so a run the
        # engine refuses (bad input) leaves nothing behind.
        self._pending: dict[str, _Pending] = {}
        self._heads: dict[str, _Head] = {}  # what the run row last said, per run this process drives
        with self._errors("open"):
            make_state_dir(self.path.parent)
            self.conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                        check_same_thread=False)
        with self._errors("open"):
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            # Reading the schema first: a non-database file or a newer schema fails here,
            # before any pragma below could write to it.
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            refuse_newer(current_version(self.conn), str(self.path))
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            migrate(self.conn, str(self.path))

    # -- errors -------------------------------------------------------------------------

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(self._describe(exc, doing), hint=self._hint(exc)) from None
        except OSError as exc:
            if is_disk_full(exc):
                raise disk_full(f"store {self.path}", doing) from None
            raise StoreError(f"store {self.path}: cannot {doing}: {exc.strerror or exc}") from None

    def _describe(self, exc: sqlite3.Error, doing: str) -> str:
        text = str(exc)
        where = f"store {self.path}"
        if "locked" in text or "busy" in text:
            return f"{where} is locked by another process (waited {self.timeout:g} s to {doing})"
        if "not a database" in text or "malformed" in text:
            return f"{where} is not a valid wfops database (corrupt or another kind of file)"
        if "full" in text:
            return disk_full(where, doing).message
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
        if "full" in text:
            return disk_full("", "").hint
        return None

    @contextmanager
    def _write(self, doing: str) -> Iterator[sqlite3.Connection]:
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

    def begin_run(self, run_id: str, *, artifacts: Mapping[str, str],
                  normalized: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any]) -> None:
        self._pending[run_id] = _Pending(dict(artifacts), dict(normalized), dict(meta))

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        try:
            head: _Head = (run.status, run.outcome, _dump(run.output), _dump(run.error),
                           _dump(_interrupt_dict(run.interrupt)))
            cursor = _dump(run.cursor) or "{}"
            # A plain step (same status, nothing new to report) is ONE row insert: the cursor
            # rides on the step's trace row and the run row is left alone. This halves the
            # per-step cost; readers take the newest cursor from either place.
            light = bool(entries) and self._heads.get(run.run_id) == head
            last = max(e.seq for e in entries) if entries else None
            rows = [(run.run_id, e.seq, e.step, e.kind, e.attempt, _dump(e.input), e.outcome,
                     _dump(e.output), _dump(e.state_changes) or "[]", e.next, _dump(e.error),
                     e.started_at, e.ended_at, cursor if light and e.seq == last else None)
                    for e in entries]
            check_text([*rows, head])
        except UNSTORABLE as exc:
            raise unstorable(run.run_id, exc) from None
        db = self.conn
        # Inlined `_write`: this is the hot path, once per step.
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if not light:
                    self._commit_head(db, run, head, cursor)
                db.executemany(_INSERT_TRACE, rows)
                if not light:
                    self._finish_head(db, run.run_id)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(self._describe(exc, "commit a step"), hint=self._hint(exc)) from None
        except UNSTORABLE as exc:  # the run's input or meta, written with its first commit
            raise unstorable(run.run_id, exc) from None
        self._heads[run.run_id] = head
        self._pending.pop(run.run_id, None)

    def _commit_head(self, db: sqlite3.Connection, run: RunSnapshot, head: _Head, cursor: str) -> None:
        stamp = now()
        pending = self._pending.get(run.run_id)
        if pending is not None:
            self._insert_run(db, run, stamp, *pending, new=True)
        elif run.run_id not in self._heads:  # first commit of this process: a resume, or no begin_run
            self._insert_run(db, run, stamp, {}, {}, {}, new=False)
        cur = db.execute(
            "UPDATE runs SET status=:status, outcome=:outcome, output=:output, error=:error, "
            "interrupt=:interrupt, cursor=:cursor, updated_at=:stamp WHERE id=:id",
            {"status": head[0], "outcome": head[1], "output": head[2], "error": head[3],
             "interrupt": head[4], "cursor": cursor, "stamp": stamp, "id": run.run_id})
        if cur.rowcount == 0:
            raise StoreError(f"store {self.path}: run {run.run_id} was removed while it ran")

    @staticmethod
    def _finish_head(db: sqlite3.Connection, run_id: str) -> None:
        # After this commit's trace rows: the run row's cursor is the newest one.
        db.execute("UPDATE runs SET cursor_seq=(SELECT COALESCE(MAX(seq), 0) FROM trace WHERE run_id=:id), "
                   "steps=(SELECT count(*) FROM trace WHERE run_id=:id) WHERE id=:id", {"id": run_id})

    def _insert_run(self, db: sqlite3.Connection, run: RunSnapshot, stamp: str,
                    artifacts: Mapping[str, str], normalized: Mapping[str, Mapping[str, Any]],
                    meta: Mapping[str, Any], *, new: bool) -> None:
        """Create the run's rows. A `new` run whose id is taken fails: two runs never mix."""
        db.executemany("INSERT OR IGNORE INTO artifacts VALUES (?, ?)",
                       [(h, canonical_json(n)) for h, n in normalized.items()])
        artifacts = {run.workflow: run.artifact, **artifacts}
        db.executemany("INSERT OR IGNORE INTO run_artifacts VALUES (?, ?, ?)",
                       [(run.run_id, name, h) for name, h in artifacts.items()])
        db.execute("INSERT OR IGNORE INTO run_inputs VALUES (?, ?, ?)",
                   (run.run_id, _dump(run.input) or "null", _dump(meta) or "{}"))
        db.execute(
            f"INSERT {'' if new else 'OR IGNORE '}INTO runs (id, deployment, workflow, artifact, status, outcome, output, "
            "error, interrupt, cursor, steps, cursor_seq, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,0,0,?,?)",
            (run.run_id, run.deployment, run.workflow, run.artifact, run.status, run.outcome,
             _dump(run.output), _dump(run.error), _dump(_interrupt_dict(run.interrupt)),
             _dump(run.cursor) or "{}", stamp, stamp))

    def import_run(self, run: RunRecord, entries: list[TraceEntry],
                   workflows: Mapping[str, tuple[str, Mapping[str, Any]]]) -> bool:
        snap = run.snapshot
        with self._write("copy a run") as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO runs (id, deployment, workflow, artifact, status, outcome, output, "
                "error, interrupt, cursor, steps, cursor_seq, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (snap.run_id, snap.deployment, snap.workflow, snap.artifact, snap.status, snap.outcome,
                 _dump(snap.output), _dump(snap.error), _dump(_interrupt_dict(snap.interrupt)),
                 _dump(snap.cursor) or "{}", len(entries), max((e.seq for e in entries), default=0),
                 run.created_at, run.updated_at))
            if cur.rowcount == 0:
                return False  # already there: copying twice adds nothing
            db.executemany("INSERT OR IGNORE INTO artifacts VALUES (?, ?)",
                           [(h, canonical_json(a)) for h, a in workflows.values()])
            db.executemany("INSERT OR IGNORE INTO run_artifacts VALUES (?, ?, ?)",
                           [(snap.run_id, name, h) for name, (h, _a) in workflows.items()])
            db.execute("INSERT OR IGNORE INTO run_inputs VALUES (?, ?, ?)",
                       (snap.run_id, _dump(snap.input) or "null", _dump(dict(run.meta)) or "{}"))
            db.executemany(_INSERT_TRACE, [
                (snap.run_id, e.seq, e.step, e.kind, e.attempt, _dump(e.input), e.outcome, _dump(e.output),
                 _dump(e.state_changes) or "[]", e.next, _dump(e.error), e.started_at, e.ended_at, None)
                for e in entries])
        return True

    def delete_run(self, run_id: str) -> None:
        with self._write("delete a run") as db:
            if not db.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone():
                raise UnknownRunError(f"no run {run_id!r} in {self.path}")
            self._delete(db, [run_id])

    def prune(self, older_than_days: float) -> int:
        cutoff = stamp(datetime.now(UTC) - timedelta(days=older_than_days))
        with self._write("prune runs") as db:
            ids = [r[0] for r in db.execute(
                f"SELECT id FROM runs WHERE status IN ({','.join('?' * len(FINISHED))}) AND updated_at < ?",
                (*FINISHED, cutoff))]
            self._delete(db, ids)
        return len(ids)

    @staticmethod
    def _delete(db: sqlite3.Connection, ids: list[str]) -> None:
        rows = [(i,) for i in ids]
        for table, column in (("trace", "run_id"), ("run_artifacts", "run_id"), ("run_inputs", "run_id"),
                              ("cancel_requests", "run_id"), ("runs", "id")):
            db.executemany(f"DELETE FROM {table} WHERE {column}=?", rows)
        # Artifacts no run refers to any more go too; they are rebuilt by the next run.
        db.execute("DELETE FROM artifacts WHERE hash NOT IN (SELECT hash FROM run_artifacts)")

    # -- cancel and fork ----------------------------------------------------------------

    def request_cancel(self, run_id: str) -> None:
        with self._write("request a cancel") as db:
            db.execute("INSERT OR IGNORE INTO cancel_requests VALUES (?, ?)", (run_id, now()))

    def cancel_requested(self, run_id: str) -> bool:
        with self._errors("read cancel requests"):
            return self.conn.execute("SELECT 1 FROM cancel_requests WHERE run_id=?", (run_id,)).fetchone() is not None

    def clear_cancel(self, run_id: str) -> None:
        with self._write("clear a cancel request") as db:
            db.execute("DELETE FROM cancel_requests WHERE run_id=?", (run_id,))

    def mark_cancelled(self, run_id: str) -> None:
        with self._write("cancel a run") as db:
            # The newest cursor may ride on a trace row (see `commit`): keep it on the run row.
            db.execute("UPDATE runs SET status='cancelled', interrupt=NULL, updated_at=:stamp, "
                       "cursor=COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id=:id AND t.seq > runs.cursor_seq "
                       "AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), cursor) WHERE id=:id",
                       {"id": run_id, "stamp": now()})
            self._finish_head(db, run_id)
            db.execute("DELETE FROM cancel_requests WHERE run_id=?", (run_id,))
        self._heads.pop(run_id, None)

    def fork_run(self, source_id: str, new_id: str, *, upto_seq: int, input: Any,
                 meta: Mapping[str, Any]) -> None:
        source = self.get_run(source_id).snapshot
        moment = now()
        with self._write("fork a run") as db:
            db.execute("INSERT INTO runs (id, deployment, workflow, artifact, status, cursor, steps, cursor_seq, "
                       "created_at, updated_at) VALUES (?,?,?,?,'running',?,0,0,?,?)",
                       (new_id, source.deployment, source.workflow, source.artifact,
                        _dump({"seq": upto_seq, "step": None}), moment, moment))
            db.execute("INSERT INTO run_inputs VALUES (?, ?, ?)", (new_id, _dump(input) or "null", _dump(meta) or "{}"))
            db.execute("INSERT INTO run_artifacts SELECT ?, workflow, hash FROM run_artifacts WHERE run_id=?",
                       (new_id, source_id))
            db.execute("INSERT INTO trace (run_id, seq, step, kind, attempt, input, outcome, output, state_changes, "
                       "next, error, started_at, ended_at, cursor) SELECT ?, seq, step, kind, attempt, input, outcome, "
                       "output, state_changes, next, error, started_at, ended_at, NULL FROM trace "
                       "WHERE run_id=? AND seq <= ?", (new_id, source_id, upto_seq))
            self._finish_head(db, new_id)

    # -- reads --------------------------------------------------------------------------

    # While a run is running, its newest cursor, step count and time may live in the trace
    # (see `commit`); once it stops, the run row holds them.
    _RUN_COLUMNS = (
        "r.id, r.deployment, r.workflow, r.artifact, r.status, r.outcome, r.output, r.error, r.interrupt, "
        "COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id = r.id AND t.seq > r.cursor_seq "
        "AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), r.cursor), "
        "CASE WHEN r.status = 'running' THEN (SELECT count(*) FROM trace t WHERE t.run_id = r.id) "
        "ELSE r.steps END, r.created_at, "
        "CASE WHEN r.status = 'running' THEN MAX(r.updated_at, COALESCE((SELECT t.ended_at FROM trace t "
        "WHERE t.run_id = r.id ORDER BY t.seq DESC LIMIT 1), '')) ELSE r.updated_at END, "
        "i.input, i.meta")

    def get_run(self, run_id: str) -> RunRecord:
        with self._errors("read a run"):
            row = self.conn.execute(
                f"SELECT {self._RUN_COLUMNS} FROM runs r LEFT JOIN run_inputs i ON i.run_id = r.id "
                "WHERE r.id=?", (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(f"no run {run_id!r} in {self.path}",
                                  hint="`wfops runs list` shows the stored runs")
        return _record(row)

    def list_runs(self, *, deployment: str | None = None, status: str | None = None,
                  limit: int = 20) -> list[RunRecord]:
        where, args = [], []
        if deployment is not None:
            where.append("r.deployment = ?")
            args.append(deployment)
        if status is not None:
            where.append("r.status = ?")
            args.append(status)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._errors("list runs"):
            rows = self.conn.execute(
                f"SELECT {self._RUN_COLUMNS} FROM runs r LEFT JOIN run_inputs i ON i.run_id = r.id "
                f"{clause} ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?", (*args, _int64(limit))).fetchall()
        return [_record(row) for row in rows]

    def trace(self, run_id: str, *, from_seq: int | None = None,
              limit: int | None = None) -> list[TraceEntry]:
        self.get_run(run_id)
        with self._errors("read a trace"):
            rows = self.conn.execute(
                "SELECT seq, step, kind, attempt, input, outcome, output, state_changes, next, error, "
                "started_at, ended_at FROM trace WHERE run_id=? AND seq >= ? ORDER BY seq LIMIT ?",
                (run_id, _int64(from_seq if from_seq is not None else -1), _int64(limit if limit is not None else -1)),
            ).fetchall()
        return [TraceEntry(seq=r[0], step=r[1], kind=r[2], attempt=r[3], input=_load(r[4]),
                           outcome=r[5], output=_load(r[6]), state_changes=_load(r[7]) or [],
                           next=r[8], error=_load(r[9]), started_at=r[10], ended_at=r[11])
                for r in rows]

    def run_workflows(self, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
        self.get_run(run_id)
        with self._errors("read artifacts"):
            rows = self.conn.execute(
                "SELECT ra.workflow, ra.hash, a.normalized FROM run_artifacts ra "
                "LEFT JOIN artifacts a ON a.hash = ra.hash WHERE ra.run_id=?", (run_id,)).fetchall()
        missing = [name for name, _h, text in rows if text is None]
        if missing:
            raise StoreError(f"store {self.path} lacks the artifact of workflow(s) {', '.join(missing)} "
                             f"for run {run_id}")
        return {name: (h, json.loads(text)) for name, h, text in rows}

    # -- locks and lifetime -------------------------------------------------------------

    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        return locks.run_lock(self.lock_dir, run_id, where=f"store {self.path}")

    def run_is_driven(self, run_id: str) -> bool:
        return locks.is_locked(self.lock_dir, run_id)

    def close(self) -> None:
        with self._errors("close"):
            self.conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def env_timeout() -> float | None:
    value = os.environ.get("WFOPS_DB_TIMEOUT")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        raise StoreError(f"WFOPS_DB_TIMEOUT={value!r} is not a number of seconds") from None


def _int64(value: int) -> int:
    """SQLite integers are 64-bit: a larger --from/--limit means "all", not an OverflowError."""
    return max(-(2**63), min(int(value), 2**63 - 1))
