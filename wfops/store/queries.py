"""The SQL both run-store backends send, written once and spelled per dialect.

Every statement is written in SQLite's spelling (`?` and `:name` parameters,
`INSERT OR IGNORE`); `Dialect.sql` / `Dialect.insert_ignore` turn it into
PostgreSQL's (`%s`, `%(name)s`, `ON CONFLICT DO NOTHING`). The few words that differ
otherwise (`MAX` of two values, the column that orders runs of one instant, row locks,
"no LIMIT") are fields of `Dialect`. All text is built once, at import, not per call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from wfops.store.protocol import FINISHED

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
INT64 = 2**63 - 1

# The tables holding a run's rows, and the column naming the run in each: what deleting
# a run removes (artifacts no run refers to any more go separately).
RUN_TABLES = (("trace", "run_id"), ("run_artifacts", "run_id"), ("run_inputs", "run_id"),
              ("cancel_requests", "run_id"), ("cache_hits", "run_id"), ("step_logs", "run_id"), ("runs", "id"))


@dataclass(frozen=True, slots=True)
class Dialect:
    pyformat: bool        # psycopg's %s / %(name)s parameters, else SQLite's ? / :name
    greatest: str         # the larger of two values
    tiebreak: str         # orders runs created in the same instant, newest first
    unlimited: int | None  # the LIMIT value meaning "all"
    lock_rows: str        # appended to a SELECT of rows the transaction then deletes

    @property
    def param(self) -> str:
        return "%s" if self.pyformat else "?"

    def sql(self, text: str) -> str:
        """`text`, written with SQLite's parameters, in this dialect."""
        if not self.pyformat:
            return text
        text = text.replace("%", "%%").replace("?", "%s")
        return _NAMED.sub(r"%(\1)s", text)

    def insert_ignore(self, rest: str) -> str:
        """`INSERT <rest>` that adds nothing where a row of that key exists."""
        if self.pyformat:
            return self.sql(f"INSERT {rest} ON CONFLICT DO NOTHING")
        return f"INSERT OR IGNORE {rest}"


SQLITE = Dialect(pyformat=False, greatest="MAX", tiebreak="r.rowid", unlimited=-1, lock_rows="")
# No rowid on PostgreSQL: the id (a UTC time, then randomness) orders runs of the same
# instant. Rows a transaction deletes are locked as it reads them (SQLite's BEGIN
# IMMEDIATE already locks the whole file).
POSTGRES = Dialect(pyformat=True, greatest="GREATEST", tiebreak="r.id", unlimited=None,
                   lock_rows=" FOR UPDATE")


def clamp(value: int) -> int:
    """Both backends' integers are 64-bit: a larger --from/--limit means "all", not an overflow error."""
    return max(-INT64 - 1, min(int(value), INT64))


_TRACE_COLUMNS = ("run_id, seq, step, kind, attempt, input, outcome, output, state_changes, next, error, "
                  "started_at, ended_at, cursor, extra")
# The same minus `error` and `extra`, which a plain step's row leaves NULL: binding None costs
# the driver a failed adapter lookup per parameter, and this row is written once per step.
_PLAIN_COLUMNS = ("run_id, seq, step, kind, attempt, input, outcome, output, state_changes, next, started_at, "
                  "ended_at, cursor")
# A plain group's rows (a foreach's items): `next` is NULL too, and `cursor` but on the newest.
_GROUP_COLUMNS = _PLAIN_COLUMNS.replace(" next,", "")
#: The most rows one `group_insert` statement holds (a larger group is written in parts).
GROUP_ROWS = 64


@cache
def group_insert(rows: int, newest: bool) -> str:
    """ONE statement for `rows` rows of a plain group, each without the columns it leaves NULL
    (`error`, `extra`, `next`), the last with its cursor when it is the `newest`, the others'
    cursor a literal NULL (no NULL is bound: binding a None costs the driver a failed adapter
    lookup). One statement's work instead of one per row. SQLite's spelling; at most
    `GROUP_ROWS` rows."""
    bare = f"({','.join('?' * 11)},NULL)"
    values = [bare] * (rows - 1) + [f"({','.join('?' * 12)})" if newest else bare]
    return f"INSERT INTO trace ({_GROUP_COLUMNS}) VALUES {','.join(values)}"


_RUN_INSERT = ("INTO runs (id, deployment, workflow, artifact, status, outcome, output, error, interrupt, "
               "cursor, steps, cursor_seq, created_at, updated_at) ")
# After a commit's trace rows: the run row's cursor is the newest one.
_FINISH_HEAD = ("UPDATE runs SET cursor_seq=(SELECT COALESCE(MAX(seq), 0) FROM trace WHERE run_id=:id), "
                "steps=(SELECT count(*) FROM trace WHERE run_id=:id) WHERE id=:id")


@dataclass(frozen=True, slots=True)
class Queries:
    """Every shared statement, in one dialect."""

    dialect: Dialect
    insert_trace: str
    insert_plain_trace: str  # a plain step's row: no error, no extra (both stay NULL)
    select_runs: str      # followed by a WHERE clause, ORDER BY, ...
    get_run: str
    run_head: str         # what `record_of` reads: a run's step count, times and meta
    list_runs_order: str  # ORDER BY and LIMIT of `list_runs`
    trace: str
    trace_output: str
    run_workflows: str
    update_head: str
    finish_head: str
    insert_run: str
    insert_run_if_new: str
    import_run: str
    insert_artifact: str
    insert_run_artifact: str
    insert_input: str
    run_known: str        # whether a run is stored (`trace`, `step_logs`, `run_workflows` refuse an unknown one)
    run_exists: str       # the same inside a write transaction, the row locked where the dialect can
    prunable: str
    request_cancel: str
    cancel_requested: str
    clear_cancel: str
    mark_cancelled: str
    fork_run: str
    fork_input: str
    fork_artifacts: str
    fork_trace: str


def queries(d: Dialect) -> Queries:
    # While a run is running, its newest cursor, step count and time may live in the trace
    # (a plain step's commit writes only its trace row); once it stops, the run row holds them.
    steps = "CASE WHEN r.status = 'running' THEN (SELECT count(*) FROM trace t WHERE t.run_id = r.id) ELSE r.steps END"
    updated = (f"CASE WHEN r.status = 'running' THEN {d.greatest}(r.updated_at, COALESCE((SELECT t.ended_at "
               "FROM trace t WHERE t.run_id = r.id ORDER BY t.seq DESC LIMIT 1), '')) ELSE r.updated_at END")
    run_columns = (
        "r.id, r.deployment, r.workflow, r.artifact, r.status, r.outcome, r.output, r.error, r.interrupt, "
        "COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id = r.id AND t.seq > r.cursor_seq "
        f"AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), r.cursor), {steps}, r.created_at, {updated}, "
        "i.input, i.meta, r.output_refs")
    runs = "FROM runs r LEFT JOIN run_inputs i ON i.run_id = r.id"
    known = "SELECT 1 FROM runs WHERE id=?"
    select_runs = f"SELECT {run_columns} {runs}"
    q = d.sql
    return Queries(
        dialect=d,
        insert_trace=q(f"INSERT INTO trace ({_TRACE_COLUMNS}) VALUES ({','.join('?' * 15)})"),
        insert_plain_trace=q(f"INSERT INTO trace ({_PLAIN_COLUMNS}) VALUES ({','.join('?' * 13)})"),
        select_runs=q(select_runs),
        get_run=q(f"{select_runs} WHERE r.id=?"),
        run_head=q(f"SELECT {steps}, r.created_at, {updated}, i.meta {runs} WHERE r.id=?"),
        list_runs_order=q(f"ORDER BY r.created_at DESC, {d.tiebreak} DESC LIMIT ?"),
        trace=q("SELECT seq, step, kind, attempt, input, outcome, output, state_changes, next, error, "
                "started_at, ended_at, extra FROM trace WHERE run_id=? AND seq >= ? ORDER BY seq LIMIT ?"),
        run_workflows=q("SELECT ra.workflow, ra.hash, a.normalized FROM run_artifacts ra "
                        "LEFT JOIN artifacts a ON a.hash = ra.hash WHERE ra.run_id=?"),
        update_head=q("UPDATE runs SET status=:status, outcome=:outcome, output=:output, output_refs=:output_refs, "
                      "error=:error, interrupt=:interrupt, cursor=:cursor, updated_at=:stamp WHERE id=:id"),
        trace_output=q("SELECT output FROM trace WHERE run_id=? AND seq=?"),
        finish_head=q(_FINISH_HEAD),
        insert_run=q(f"INSERT {_RUN_INSERT}VALUES (?,?,?,?,?,?,?,?,?,?,0,0,?,?)"),
        insert_run_if_new=d.insert_ignore(f"{_RUN_INSERT}VALUES (?,?,?,?,?,?,?,?,?,?,0,0,?,?)"),
        import_run=d.insert_ignore(f"{_RUN_INSERT}VALUES ({','.join('?' * 14)})"),
        insert_artifact=d.insert_ignore("INTO artifacts VALUES (?, ?)"),
        insert_run_artifact=d.insert_ignore("INTO run_artifacts VALUES (?, ?, ?)"),
        insert_input=d.insert_ignore("INTO run_inputs VALUES (?, ?, ?)"),
        run_known=q(known),
        run_exists=q(f"{known}{d.lock_rows}"),
        prunable=q(f"SELECT id FROM runs WHERE status IN ({','.join('?' * len(FINISHED))}) "
                   f"AND updated_at < ?{d.lock_rows}"),
        request_cancel=d.insert_ignore("INTO cancel_requests VALUES (?, ?)"),
        cancel_requested=q("SELECT 1 FROM cancel_requests WHERE run_id=?"),
        clear_cancel=q("DELETE FROM cancel_requests WHERE run_id=?"),
        # The newest cursor may ride on a trace row: keep it on the run row.
        mark_cancelled=q("UPDATE runs SET status='cancelled', interrupt=NULL, updated_at=:stamp, "
                         "cursor=COALESCE((SELECT t.cursor FROM trace t WHERE t.run_id=:id "
                         "AND t.seq > runs.cursor_seq AND t.cursor IS NOT NULL ORDER BY t.seq DESC LIMIT 1), "
                         "cursor) WHERE id=:id"),
        fork_run=q("INSERT INTO runs (id, deployment, workflow, artifact, status, cursor, steps, cursor_seq, "
                   "created_at, updated_at) VALUES (?,?,?,?,'running',?,0,0,?,?)"),
        fork_input=q("INSERT INTO run_inputs VALUES (?, ?, ?)"),
        fork_artifacts=q("INSERT INTO run_artifacts SELECT ?, workflow, hash FROM run_artifacts WHERE run_id=?"),
        fork_trace=q(f"INSERT INTO trace ({_TRACE_COLUMNS}) SELECT ?, seq, step, kind, attempt, input, "
                     "outcome, output, state_changes, next, error, started_at, ended_at, NULL, extra FROM trace "
                     "WHERE run_id=? AND seq <= ?"),
    )
