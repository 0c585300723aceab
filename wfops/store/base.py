"""What the SQLite and PostgreSQL run stores share: every read and every write of the
`Store` protocol, in the backend's dialect (`wfops.store.queries`).

A backend supplies its connection (`conn`), which errors of its driver it catches and
how each reads as a `StoreError` (`_failures`, `_failure`), how a write transaction is
taken (`_transaction`), how runs' rows are deleted (`_delete`), and its run locks. Its
per-step `commit` stays its own, inlined (the hot path), built from `_step_rows`,
`_commit_head` and `_finish_head`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cache
from json.encoder import encode_basestring  # what `dump` writes strings with
from typing import Any, ClassVar, NamedTuple, Protocol, Self

from wfops.canonical import canonical_json
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import InvalidArgument, StoreError, UnknownRunError
from wfops.store.cache import CacheStore, attach_hits
from wfops.store.protocol import (
    FINISHED,
    RunFilter,
    RunRecord,
    Slot,
    SlotRecord,
    SlotTaken,
    StepLog,
)
from wfops.store.queries import Dialect, Queries, clamp
from wfops.store.rows import (
    ENCODE_CONTAINER,
    LARGE_OUTPUT,
    UNSTORABLE,
    Known,
    changes_text,
    check_text,
    dump,
    interrupt_dict,
    large_parts,
    load,
    now,
    record,
    record_around,
    resolved_changes,
    resolved_output,
    shared_changes,
    shared_output,
    stamp,
    unstorable,
)

DEFAULT_TIMEOUT = 10.0  # seconds a writer waits for another writer's transaction (and to connect)


class Reads(Protocol):
    """A connection or cursor of either driver, as far as a single statement goes."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


class Writes(Reads, Protocol):
    """What a write transaction of either backend is given."""

    def executemany(self, sql: str, rows: Any, /) -> Any: ...


class Pending(NamedTuple):
    """What `begin_run` was given, written with the run's first commit."""

    artifacts: dict[str, str]
    normalized: dict[str, Mapping[str, Any]]
    meta: dict[str, Any]
    texts: dict[str, str]  # hash -> canonical JSON of its normalized form, where the caller had it


#: What a run row says (status, outcome, and the JSON of output, error and interrupt, and
#: where the output's shared parts are: `output_refs`).
Head = tuple[str, str | None, str | None, str | None, str | None, str | None]
TraceRow = tuple[Any, ...]
#: A plain group's rows (`SqlStore._group_rows`): the plain rows without a cursor, the newest
#: entry's plain row with it (None when that entry is not plain), and the full rows.
GroupRows = tuple[list[TraceRow], TraceRow | None, list[TraceRow]]


class SqlStore(CacheStore, ABC):
    """The shared part of a backend; see the module's text for what a subclass supplies."""

    name: str
    conn: Reads
    _q: ClassVar[Queries]
    _failures: ClassVar[tuple[type[Exception], ...]]  # the driver's errors, as `_errors` catches them
    # Whether the driver itself refuses text that is not valid Unicode (a lone surrogate) with
    # a `UnicodeEncodeError` as it binds a step's rows, inside the step's transaction (rolled
    # back, then reported as unstorable): the per-step `check_text` is then not needed.
    _binding_checks_text: ClassVar[bool] = False

    def __init__(self) -> None:
        # Artifacts and inputs are written with a run's first commit, so a run the
        # engine refuses (bad input) leaves nothing behind.
        self._pending: dict[str, Pending] = {}
        self._heads: dict[str, Head] = {}  # what the run row last said, per run this process drives
        # Large trace outputs this store wrote or read, per run: the run's output can point at
        # them instead of holding a second copy. `_fresh`: those of a commit not yet done.
        self._known: dict[str, Known] = {}
        self._fresh: dict[str, Known] = {}
        self._slots: dict[str, Slot] = {}  # run id -> the schedule slot its first commit claims

    # -- errors, and what a backend supplies ----------------------------------------------

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """The driver's errors inside leave as one-line `StoreError`s."""
        try:
            yield
        except self._failures as exc:
            raise self._failure(exc, doing) from None

    @abstractmethod
    def _failure(self, exc: Exception, doing: str) -> StoreError:
        """The `StoreError` for one of `_failures` raised while trying to do `doing`."""

    @abstractmethod
    def _transaction(self, doing: str) -> AbstractContextManager[Writes]:
        """One write transaction, under `_errors(doing)`."""

    def _sql(self, text: str) -> str:
        return _spelled(self._q.dialect, text)

    def _statement(self, doing: str) -> AbstractContextManager[Reads]:
        """Where one write statement runs by itself: by default a transaction of its own."""
        return self._transaction(doing)

    @abstractmethod
    def _share_artifacts(self, tx: Writes) -> None:
        """Called before a transaction refers to artifacts: a backend whose `_delete` of
        unreferenced artifacts could run at the same time takes a lock here."""

    @abstractmethod
    def _delete(self, tx: Writes, ids: list[str]) -> None:
        """Delete the runs `ids` (rows of every table in `RUN_TABLES`) and artifacts no run uses."""

    def forget_runs(self) -> None:
        """Drop what this store object remembers of the runs it drove (their last run row, large
        outputs), so a run it drives next reads the store as a freshly opened one would."""
        for remembered in (self._pending, self._heads, self._known, self._fresh):
            remembered.clear()

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the per-step commit's parts ------------------------------------------------------

    def begin_run(self, run_id: str, *, artifacts: Mapping[str, str],
                  normalized: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any],
                  texts: Mapping[str, str] | None = None, slot: Slot | None = None) -> None:
        self._pending[run_id] = Pending(dict(artifacts), dict(normalized), dict(meta), dict(texts or {}))
        if slot is not None:
            self._slots[run_id] = slot

    def _step_rows(self, run: RunSnapshot, entries: list[TraceEntry]) -> tuple[Head, str, bool, list[TraceRow]]:
        """What a step's commit writes: the run row's head and cursor, whether it is `light`,
        and its trace rows; `UnstorableValue` for a value that cannot be stored."""
        try:
            outputs = [dump(e.output) for e in entries]
            fresh: Known = {}
            for entry, text in zip(entries, outputs, strict=True):
                if text is not None and len(text) >= LARGE_OUTPUT:
                    fresh.update(large_parts(entry.seq, entry.output))
            self._fresh[run.run_id] = fresh
            known = {**self._known.get(run.run_id, {}), **fresh} if fresh else self._known.get(run.run_id, {})
            output, refs = shared_output(run.output, known)
            head: Head = (run.status, run.outcome, output, dump(run.error), dump(interrupt_dict(run.interrupt)), refs)
            cursor = _cursor_text(run.cursor)
            # A plain step (same status, nothing new to report) is ONE row insert: the cursor
            # rides on the step's trace row and the run row is left alone. This halves the
            # per-step cost; readers take the newest cursor from either place.
            light = bool(entries) and self._heads.get(run.run_id) == head
            rows = _trace_rows(run.run_id, entries, _last_seq(entries) if light else None, cursor, outputs)
            if not self._binding_checks_text:
                check_text([*rows, head])
        except UNSTORABLE as exc:
            raise unstorable(run.run_id, exc) from None
        return head, cursor, light, rows

    def _plain_row(self, run: RunSnapshot, entry: TraceEntry) -> TraceRow | None:
        """The row of a plain step's commit, in `Queries.insert_plain_trace`'s order, or None when
        the commit is not one (then `_step_rows` says what it writes). A plain step is most of a
        run: one entry, no error or extras, not cached, an output below `LARGE_OUTPUT`, and a run
        row that would say what it says already (`_step_rows`'s `light`: the cursor rides on
        the row). The same row `_step_rows` gives, with its NULL `error` and `extra` left out."""
        if entry.error is not None or entry.extra is not None or entry.cache_note is not None \
                or not self._run_row_stays(run):
            return None
        try:
            given, output, written = _plain_values(entry)
            if output is not None and len(output) >= LARGE_OUTPUT:
                return None
            row = (run.run_id, entry.seq, entry.step, entry.kind, entry.attempt, given, entry.outcome,
                   output, written, entry.next, entry.started_at, entry.ended_at, _cursor_text(run.cursor))
            if not self._binding_checks_text:
                check_text([row])
        except UNSTORABLE as exc:
            raise unstorable(run.run_id, exc) from None
        return row

    def _group_rows(self, run: RunSnapshot, entries: list[TraceEntry]) -> GroupRows | None:
        """The rows of a plain group's commit (a parallel foreach's items that finished in one
        loop turn), or None when the commit is not one (then `_step_rows` says what it writes).
        A plain group: a run row that would say what it says already (as `_plain_row` asks), no
        cache note and no output of `LARGE_OUTPUT` or more. Each entry without an error, extras
        or `next` (an item's) becomes its row without those NULL columns (`group_insert`'s
        values): the one of the newest seq with the cursor, the others without it; any other
        entry keeps its full row (`Queries.insert_trace`). The same rows `_step_rows` gives,
        with their NULL columns left out."""
        if not self._run_row_stays(run):
            return None
        run_id, last = run.run_id, _last_seq(entries)
        cursor = _cursor_text(run.cursor)
        bare: list[TraceRow] = []
        full: list[TraceRow] = []
        newest: TraceRow | None = None
        try:
            for entry in entries:
                if entry.cache_note is not None:
                    return None
                given, output, written = _plain_values(entry)
                if output is not None and len(output) >= LARGE_OUTPUT:
                    return None
                if entry.error is not None or entry.extra is not None or entry.next is not None:
                    full.append((run_id, entry.seq, entry.step, entry.kind, entry.attempt, given, entry.outcome,
                                 output, written, entry.next, dump(entry.error), entry.started_at,
                                 entry.ended_at, cursor if entry.seq == last else None, dump(entry.extra)))
                elif entry.seq == last:
                    newest = (run_id, entry.seq, entry.step, entry.kind, entry.attempt, given, entry.outcome,
                              output, written, entry.started_at, entry.ended_at, cursor)
                else:
                    bare.append((run_id, entry.seq, entry.step, entry.kind, entry.attempt, given, entry.outcome,
                                 output, written, entry.started_at, entry.ended_at))
            if not self._binding_checks_text:
                check_text([*bare, *full] if newest is None else [*bare, *full, newest])
        except UNSTORABLE as exc:
            raise unstorable(run_id, exc) from None
        return bare, newest, full

    def _run_row_stays(self, run: RunSnapshot) -> bool:
        """Whether the run row already says what `run` says and it has nothing more to report
        (no output, error, interrupt or outcome): a commit that leaves the run row alone, its
        cursor riding on the newest trace row (`_step_rows`'s `light`)."""
        return run.output is None and run.error is None and run.interrupt is None and run.outcome is None \
            and self._heads.get(run.run_id) == (run.status, None, None, None, None, None)

    @abstractmethod
    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        """A step's entries and the run snapshot after them, in ONE transaction (each backend's
        own, inlined: the hot path)."""

    def _commit_head(self, tx: Writes, run: RunSnapshot, head: Head, cursor: str) -> None:
        moment = now()
        pending = self._pending.get(run.run_id)
        if pending is not None:
            self._insert_run(tx, run, moment, *pending, new=True)
            slot = self._slots.pop(run.run_id, None)
            if slot is not None:
                self._claim(tx, slot, run.run_id, moment)
        elif run.run_id not in self._heads:  # first commit of this process: a resume, or no begin_run
            self._insert_run(tx, run, moment, {}, {}, {}, {}, new=False)
        cur = tx.execute(self._q.update_head,
                         {"status": head[0], "outcome": head[1], "output": head[2], "error": head[3],
                          "interrupt": head[4], "output_refs": head[5], "cursor": cursor, "stamp": moment,
                          "id": run.run_id})
        if cur.rowcount == 0:
            raise StoreError(f"store {self.name}: run {run.run_id} was removed while it ran")

    def _claim(self, tx: Writes, slot: Slot, run_id: str, moment: str) -> None:
        """Claim the slot in the transaction creating the run: a slot claimed already raises
        `SlotTaken`, which rolls the whole transaction (and so the run) back."""
        cur = tx.execute(_CLAIM[self._q.dialect.pyformat], (slot.deployment, slot.entry, slot.slot, run_id, moment))
        if cur.rowcount == 0:
            raise SlotTaken(slot)

    def _committed(self, run_id: str, head: Head) -> None:
        """After a step's commit: what the run row says now, and the large outputs it wrote."""
        self._heads[run_id] = head
        self._pending.pop(run_id, None)
        fresh = self._fresh.pop(run_id, None)
        if fresh:
            self._known.setdefault(run_id, {}).update(fresh)

    def _finish_head(self, tx: Writes, run_id: str) -> None:
        # After this commit's trace rows: the run row's cursor is the newest one.
        tx.execute(self._q.finish_head, {"id": run_id})

    def _insert_run(self, tx: Writes, run: RunSnapshot, moment: str,
                    artifacts: Mapping[str, str], normalized: Mapping[str, Mapping[str, Any]],
                    meta: Mapping[str, Any], texts: Mapping[str, str], *, new: bool) -> None:
        """Create the run's rows. A `new` run whose id is taken fails: two runs never mix."""
        self._put_artifacts(tx, run.run_id, {run.workflow: run.artifact, **artifacts}, normalized, texts)
        tx.execute(self._q.insert_input, (run.run_id, dump(run.input) or "null", dump(meta) or "{}"))
        tx.execute(self._q.insert_run if new else self._q.insert_run_if_new,
                   (run.run_id, run.deployment, run.workflow, run.artifact, run.status, run.outcome,
                    dump(run.output), dump(run.error), dump(interrupt_dict(run.interrupt)),
                    dump(run.cursor) or "{}", moment, moment))

    def _put_artifacts(self, tx: Writes, run_id: str, artifacts: Mapping[str, str],
                       normalized: Mapping[str, Mapping[str, Any]], texts: Mapping[str, str] | None = None) -> None:
        self._share_artifacts(tx)
        given = texts or {}
        # Sorted: two runs inserting the same artifacts take their index entries in one order
        # (no deadlock between concurrent first commits).
        tx.executemany(self._q.insert_artifact, [(h, given.get(h) or canonical_json(normalized[h]))
                                                 for h in sorted(normalized)])
        tx.executemany(self._q.insert_run_artifact, [(run_id, name, artifacts[name]) for name in sorted(artifacts)])

    # -- other writes ---------------------------------------------------------------------

    def import_run(self, run: RunRecord, entries: list[TraceEntry],
                   workflows: Mapping[str, tuple[str, Mapping[str, Any]]]) -> bool:
        snap = run.snapshot
        with self._transaction("copy a run") as tx:
            cur = tx.execute(self._q.import_run, (
                snap.run_id, snap.deployment, snap.workflow, snap.artifact, snap.status, snap.outcome,
                dump(snap.output), dump(snap.error), dump(interrupt_dict(snap.interrupt)),
                dump(snap.cursor) or "{}", len(entries), max((e.seq for e in entries), default=0),
                run.created_at, run.updated_at))
            if cur.rowcount == 0:
                return False  # already there: copying twice adds nothing
            self._put_artifacts(tx, snap.run_id, {n: h for n, (h, _a) in workflows.items()},
                                {h: a for h, a in workflows.values()})
            tx.execute(self._q.insert_input, (snap.run_id, dump(snap.input) or "null", dump(dict(run.meta)) or "{}"))
            tx.executemany(self._q.insert_trace, _trace_rows(snap.run_id, entries, None, None))
        return True

    def delete_run(self, run_id: str) -> None:
        with self._transaction("delete a run") as tx:
            if tx.execute(self._q.run_exists, (run_id,)).fetchone() is None:
                raise UnknownRunError(f"no run {run_id!r} in {self.name}")
            self._delete(tx, [run_id])

    def prune(self, older_than_days: float) -> int:
        cutoff = stamp(prune_cutoff(older_than_days))
        with self._transaction("prune runs") as tx:
            ids = [r[0] for r in tx.execute(self._q.prunable, (*FINISHED, cutoff)).fetchall()]
            self._delete(tx, ids)
            self._prune_cache(tx, cutoff)
        return len(ids)

    # -- cancel and fork ------------------------------------------------------------------

    def request_cancel(self, run_id: str) -> None:
        with self._statement("request a cancel") as db:
            db.execute(self._q.request_cancel, (run_id, now()))

    def cancel_requested(self, run_id: str) -> bool:
        with self._errors("read cancel requests"):
            return self.conn.execute(self._q.cancel_requested, (run_id,)).fetchone() is not None

    def clear_cancel(self, run_id: str) -> None:
        with self._statement("clear a cancel request") as db:
            db.execute(self._q.clear_cancel, (run_id,))

    def mark_cancelled(self, run_id: str) -> None:
        with self._transaction("cancel a run") as tx:
            tx.execute(self._q.mark_cancelled, {"id": run_id, "stamp": now()})
            self._finish_head(tx, run_id)
            tx.execute(self._q.clear_cancel, (run_id,))
        self._heads.pop(run_id, None)

    def fork_run(self, source_id: str, new_id: str, *, upto_seq: int, input: Any,
                 meta: Mapping[str, Any]) -> None:
        source = self.get_run(source_id).snapshot
        moment = now()
        with self._transaction("fork a run") as tx:
            self._share_artifacts(tx)  # as a run's first commit
            tx.execute(self._q.fork_run, (new_id, source.deployment, source.workflow, source.artifact,
                                          dump({"seq": upto_seq, "step": None}), moment, moment))
            tx.execute(self._q.fork_input, (new_id, dump(input) or "null", dump(meta) or "{}"))
            tx.execute(self._q.fork_artifacts, (new_id, source_id))
            tx.execute(self._q.fork_trace, (new_id, source_id, upto_seq))
            tx.execute(self._sql("INSERT INTO cache_hits SELECT ?, seq, key, origin_run, origin_step, origin_seq, "
                                 "saved FROM cache_hits WHERE run_id=? AND seq <= ?"), (new_id, source_id, upto_seq))
            self._finish_head(tx, new_id)

    # -- reads ----------------------------------------------------------------------------

    def get_run(self, run_id: str) -> RunRecord:
        return self._record(self._run_row(self._q.get_run, run_id))

    def record_of(self, snapshot: RunSnapshot) -> RunRecord:
        return record_around(snapshot, *self._run_row(self._q.run_head, snapshot.run_id))

    def _known_run(self, run_id: str) -> None:
        """Raise `UnknownRunError` for an id the store does not hold (reading nothing of the run)."""
        self._run_row(self._q.run_known, run_id)

    def _run_row(self, query: str, run_id: str) -> Any:
        with self._errors("read a run"):
            row = self.conn.execute(query, (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(f"no run {run_id!r} in {self.name}",
                                  hint="`wfops runs list` shows the stored runs")
        return row

    def list_runs(self, *, deployment: str | None = None, status: str | None = None,
                  limit: int = 20, since: str | None = None, scheduled: bool = False) -> list[RunRecord]:
        clause, args = self._where(RunFilter(deployment=deployment, status=status, since=since),
                                   scheduled=scheduled)
        with self._errors("list runs"):
            rows = self.conn.execute(f"{self._q.select_runs} {clause} {self._q.list_runs_order}",
                                     (*args, clamp(limit))).fetchall()
        return [self._record(row) for row in rows]

    def slots(self, deployment: str, *, entry: str | None = None, since: str | None = None,
              unfinished: bool = False, limit: int | None = None) -> list[SlotRecord]:
        param = self._q.dialect.param
        where, args = [f"s.deployment = {param}"], [deployment]
        if entry is not None:
            where.append(f"s.entry = {param}")
            args.append(entry)
        if since is not None:
            where.append(f"s.slot >= {param}")
            args.append(since)
        if unfinished:
            where.append(f"r.status NOT IN ({', '.join(param for _ in FINISHED)})")
            args.extend(FINISHED)
        sql = (f"{_SLOTS} WHERE {' AND '.join(where)} ORDER BY s.slot DESC, s.entry "
               f"LIMIT {param}")
        unlimited = self._q.dialect.unlimited
        with self._errors("read schedule slots"):
            rows = self.conn.execute(sql, (*args, unlimited if limit is None else clamp(limit))).fetchall()
        return [_slot_record(row) for row in rows]

    def slot_of(self, run_id: str) -> SlotRecord | None:
        with self._errors("read a run's slot"):
            row = self.conn.execute(f"{_SLOTS} WHERE s.run_id = {self._q.dialect.param}", (run_id,)).fetchone()
        return None if row is None else _slot_record(row)

    def find_runs(self, filters: RunFilter, *, offset: int = 0, limit: int = 50) -> list[RunRecord]:
        """One page of the runs `filters` match, newest first (`offset` runs skipped)."""
        clause, args = self._where(filters)
        param = self._q.dialect.param
        with self._errors("list runs"):
            # The page's ids first, from an index alone: the skipped runs of a deep page are
            # never read, nor the per-run subqueries of the full row evaluated for them.
            ids = [row[0] for row in self.conn.execute(
                f"SELECT r.id FROM runs r {clause} {self._q.list_runs_order} OFFSET {param}",
                (*args, clamp(limit), clamp(max(0, offset)))).fetchall()]
            if not ids:
                return []
            rows = self.conn.execute(f"{self._q.select_runs} WHERE r.id IN ({','.join([param] * len(ids))})",
                                     ids).fetchall()
        found = {row[0]: row for row in rows}
        return [self._record(found[run_id]) for run_id in ids if run_id in found]

    def count_runs(self, filters: RunFilter) -> dict[str, int]:
        """How many runs `filters` match, by status (the status filter itself left out, so a
        page can say how many runs each status would show)."""
        clause, args = self._where(replace(filters, status=None))
        with self._errors("count runs"):
            rows = self.conn.execute(f"SELECT r.status, count(*) FROM runs r {clause} GROUP BY r.status", args).fetchall()
        return {str(status): int(n) for status, n in rows}

    def _where(self, filters: RunFilter, *, scheduled: bool = False) -> tuple[str, list[Any]]:
        """The WHERE clause (and its arguments) of the runs `filters` match; `scheduled`: only
        those a schedule started."""
        param = self._q.dialect.param
        where: list[str] = ["r.id IN (SELECT s.run_id FROM schedule_slots s)"] if scheduled else []
        args: list[Any] = []
        for column, value in (("r.deployment", filters.deployment), ("r.status", filters.status),
                              ("r.outcome", filters.outcome)):
            if value is not None:
                where.append(f"{column} = {param}")
                args.append(value)
        if filters.since is not None:
            where.append(f"r.created_at >= {param}")
            args.append(filters.since)
        if filters.until is not None:
            where.append(f"r.created_at < {param}")
            args.append(filters.until)
        return (f"WHERE {' AND '.join(where)}" if where else ""), args

    def add_step_logs(self, run_id: str, logs: list[StepLog]) -> None:
        if not logs:
            return
        insert = self._q.dialect.insert_ignore("INTO step_logs (run_id, seq, step, attempt, text) VALUES (?,?,?,?,?)")
        with self._transaction("store step logs") as tx:
            tx.executemany(insert, [(run_id, log.seq, log.step, log.attempt, log.text) for log in logs])

    def step_logs(self, run_id: str, step: str | None = None) -> list[StepLog]:
        self._known_run(run_id)
        sql = self._q.dialect.sql("SELECT seq, step, attempt, text FROM step_logs WHERE run_id=? "
                                  "ORDER BY abs(seq), seq")  # a run log (-N) just before entry N
        with self._errors("read step logs"):
            rows = self.conn.execute(sql, (run_id,)).fetchall()
        found = [StepLog(int(r[0]), r[1], int(r[2]), r[3]) for r in rows]
        if step is None:
            return found
        return [log for log in found if log.step == step or log.step.startswith((f"{step}[", f"{step}/"))]

    def _record(self, row: Any) -> RunRecord:
        """The run record, its output whole again (see `shared_output`)."""
        found = record(row)
        refs = load(row[-1])
        if not refs:
            return found
        run_id = found.snapshot.run_id

        def trace_output(seq: int) -> Any:
            with self._errors("read a run"):
                got = self.conn.execute(self._q.trace_output, (run_id, seq)).fetchone()
            return load(got[0]) if got else None

        output = resolved_output(found.snapshot.output, refs, trace_output)
        return replace(found, snapshot=replace(found.snapshot, output=output))

    def trace(self, run_id: str, *, from_seq: int | None = None,
              limit: int | None = None) -> list[TraceEntry]:
        self._known_run(run_id)
        with self._errors("read a trace"):
            rows = self.conn.execute(self._q.trace, (
                run_id, clamp(from_seq if from_seq is not None else -1),
                self._q.dialect.unlimited if limit is None or limit < 0 else clamp(limit))).fetchall()
        entries = [_entry(r) for r in rows]
        hits = self._trace_hits(run_id)
        if hits:
            attach_hits(entries, hits)
        known = self._known.setdefault(run_id, {})
        for r, entry in zip(rows, entries, strict=True):
            if r[6] is not None and len(r[6]) >= LARGE_OUTPUT:  # a resumed run's output can point at it again
                known.update(large_parts(entry.seq, entry.output))
        return entries

    def run_workflows(self, run_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
        self._known_run(run_id)
        with self._errors("read artifacts"):
            rows = self.conn.execute(self._q.run_workflows, (run_id,)).fetchall()
        missing = [name for name, _h, text in rows if text is None]
        if missing:
            raise StoreError(f"store {self.name} lacks the artifact of workflow(s) {', '.join(missing)} "
                             f"for run {run_id}")
        return {name: (h, load(text)) for name, h, text in rows}


@cache
def _spelled(dialect: Dialect, text: str) -> str:
    """`text` in `dialect`, converted once per statement (the step cache's run on every cached step)."""
    return dialect.sql(text)


_SLOTS = ("SELECT s.deployment, s.entry, s.slot, s.run_id, s.claimed_at, r.status FROM schedule_slots s "
          "LEFT JOIN runs r ON r.id = s.run_id")
#: The claim, by dialect (`pyformat`): a row of that key already there inserts nothing.
_CLAIM = {False: "INSERT OR IGNORE INTO schedule_slots VALUES (?, ?, ?, ?, ?)",
          True: "INSERT INTO schedule_slots VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"}


def _slot_record(row: Any) -> SlotRecord:
    return SlotRecord(Slot(row[0], row[1], row[2]), run_id=row[3], claimed_at=row[4], status=row[5])


def _entry(r: Any) -> TraceEntry:
    output = load(r[6])
    return TraceEntry(seq=r[0], step=r[1], kind=r[2], attempt=r[3], input=load(r[4]), outcome=r[5], output=output,
                      state_changes=resolved_changes(output, load(r[7]) or []), next=r[8], error=load(r[9]),
                      started_at=r[10], ended_at=r[11], extra=load(r[12]))


def _cursor_text(cursor: dict[str, Any]) -> str:
    """`dump(cursor)`, written directly for the engine's plain cursor `{"seq": n, "step": s}`
    (once per step; the same bytes the encoder writes)."""
    if len(cursor) == 2:
        seq, step = cursor.get("seq"), cursor.get("step")
        if type(seq) is int and type(step) is str and next(iter(cursor)) == "seq":
            return f'{{"seq":{seq},"step":{encode_basestring(step)}}}'
    return dump(cursor) or "{}"


def _plain_values(entry: TraceEntry) -> tuple[str | None, str | None, str]:
    """(input, output, state changes) of a plain row as `dump` writes them; a call's usual
    values (objects) through the C encoder at once, without a `dump` call for each."""
    value, given, changes = entry.output, entry.input, entry.state_changes
    if ENCODE_CONTAINER is not None and type(value) is dict and type(given) is dict:
        output = "".join(ENCODE_CONTAINER(value, 0))
        return "".join(ENCODE_CONTAINER(given, 0)), output, changes_text(changes, value, output) if changes else "[]"
    output_text = dump(value)
    return dump(given), output_text, changes_text(changes, value, output_text)


def _last_seq(entries: list[TraceEntry]) -> int:
    return entries[0].seq if len(entries) == 1 else max(e.seq for e in entries)


def _trace_rows(run_id: str, entries: list[TraceEntry], cursor_at: int | None,
                cursor: str | None, outputs: list[str | None] | None = None) -> list[TraceRow]:
    """Trace rows in `Queries.insert_trace`'s order; the entry of seq `cursor_at` carries `cursor`.
    `outputs`: the entries' outputs as JSON, when the caller has them already."""
    rows: list[TraceRow] = []
    for i, e in enumerate(entries):
        output = outputs[i] if outputs is not None else dump(e.output)
        changes = e.state_changes
        if changes and output is not None and len(output) >= LARGE_OUTPUT:
            changes = shared_changes(e.output, changes)  # one copy of a large output per row
        rows.append((run_id, e.seq, e.step, e.kind, e.attempt, dump(e.input), e.outcome, output,
                     changes_text(changes, e.output, output), e.next, dump(e.error), e.started_at, e.ended_at,
                     cursor if e.seq == cursor_at else None, dump(e.extra)))
    return rows


def prune_cutoff(older_than_days: float) -> datetime:
    """Now minus `older_than_days`; an age that is negative, not a number or older than the
    calendar (`1e400`) is a usage error, not an overflow deep in datetime."""
    now = datetime.now(UTC)
    limit = (now - datetime(1, 1, 1, tzinfo=UTC)).days
    if not 0 <= older_than_days <= limit:  # NaN fails both comparisons
        raise InvalidArgument(f"an age of {older_than_days:g} days is out of range: give a number of days "
                              f"from 0 to {limit:,}", argument="older_than_days")
    return now - timedelta(days=older_than_days)
