"""Versioned schema, one description for every backend, and its SQLite runner.

`MIGRATIONS` is the one ordered list of schema versions. Each has one SQL text
shared by SQLite and PostgreSQL; a word the dialects spell differently is an
`@WORD@` placeholder (`DIALECT_WORDS`), and a step whose whole text differs gives
it per dialect in `Migration.only`. A new version is one more entry here; both
backends then apply it (SQLite below, PostgreSQL in `wfops.store.postgres`).

Each migration runs in one transaction together with the row that records its
version, so a crash leaves the store at the old or the new version, never
between. A store whose version is newer than `LATEST` was made by a newer wfops
and is never touched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from wfops.errors import StoreError

DIALECT_WORDS: dict[str, dict[str, str]] = {
    # SQLite's clustered table; PostgreSQL tables are heaps with a primary-key index anyway.
    "sqlite": {"@WITHOUT_ROWID@": "WITHOUT ROWID"},
    "postgres": {"@WITHOUT_ROWID@": ""},
}

# Run rows stay small: they are rewritten on every step, so the (possibly large)
# input lives apart, and no full state is ever stored (trace rows hold the writes).
_V1 = """
CREATE TABLE artifacts (
    hash        TEXT PRIMARY KEY,
    normalized  TEXT NOT NULL
);
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,
    deployment  TEXT,
    workflow    TEXT NOT NULL,
    artifact    TEXT NOT NULL,
    status      TEXT NOT NULL,
    outcome     TEXT,
    output      TEXT,
    error       TEXT,
    interrupt   TEXT,
    cursor      TEXT NOT NULL,
    steps       INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX runs_by_time ON runs (created_at DESC);
CREATE INDEX runs_by_status ON runs (status, updated_at);
CREATE TABLE run_inputs (
    run_id      TEXT PRIMARY KEY,
    input       TEXT NOT NULL,
    meta        TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE run_artifacts (
    run_id      TEXT NOT NULL,
    workflow    TEXT NOT NULL,
    hash        TEXT NOT NULL,
    PRIMARY KEY (run_id, workflow)
);
CREATE TABLE trace (
    run_id        TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    step          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    input         TEXT,
    outcome       TEXT,
    output        TEXT,
    state_changes TEXT NOT NULL,
    next          TEXT,
    error         TEXT,
    started_at    TEXT NOT NULL,
    ended_at      TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) @WITHOUT_ROWID@;
"""

# v2: a plain step becomes one trace insert; its cursor rides on the trace row, and
# trace rows after `runs.cursor_seq` may hold a newer cursor than the run row.
_V2 = """
ALTER TABLE runs ADD COLUMN cursor_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trace ADD COLUMN cursor TEXT;
DROP INDEX runs_by_status;
CREATE INDEX runs_by_status ON runs (status);
"""

# v3: `wfops cancel` of a run another process drives leaves a request here; the driver
# polls it and stops. A request is removed when the run is driven again.
_V3 = """
CREATE TABLE cancel_requests (
    run_id       TEXT PRIMARY KEY,
    requested_at TEXT NOT NULL
);
"""

# v4: a large step output is stored once. In its trace row, a state change that wrote (a
# top-level field of) that output is a pointer into it, `{"path", "output": "/field"}`
# (`wfops.store.rows.shared_changes`); the run's own output, when it is (or holds at top
# level) such a value, keeps null there and says in `output_refs` which trace row's output
# holds it (`shared_output`). A wfops that knows neither form must not read them.
_V4 = """
ALTER TABLE runs ADD COLUMN output_refs TEXT;
"""

# v5: the step cache (`wfops.store.cache`). A call step's success by its key (the capability,
# its contract and code, the input, the secret names, the step's `cache.key`), and which
# trace entries were served from which (deleted with their run, like its trace).
_V5 = """
CREATE TABLE step_cache (
    key         TEXT PRIMARY KEY,
    deployment  TEXT,
    capability  TEXT NOT NULL,
    contract    TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    output      TEXT,
    extra       TEXT,
    run_id      TEXT NOT NULL,
    step        TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    seconds     DOUBLE PRECISION NOT NULL,
    size        INTEGER NOT NULL,
    hits        INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    used_at     TEXT NOT NULL
);
CREATE INDEX step_cache_by_time ON step_cache (created_at);
CREATE INDEX step_cache_by_deployment ON step_cache (deployment);
CREATE TABLE cache_hits (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    key         TEXT NOT NULL,
    origin_run  TEXT NOT NULL,
    origin_step TEXT NOT NULL,
    origin_seq  INTEGER NOT NULL,
    saved       DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, seq)
) @WITHOUT_ROWID@;
CREATE INDEX cache_hits_by_key ON cache_hits (key);
"""


# v6: schedule slots. A tick claims (deployment, entry, slot time) with the INSERT of this row,
# in the transaction that creates the run, so a slot starts one run however many ticks race.
# Claims outlive their runs (`runs rm`, `prune` leave them): a removed run's slot never restarts.
_V6 = """
CREATE TABLE schedule_slots (
    deployment  TEXT NOT NULL,
    entry       TEXT NOT NULL,
    slot        TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    claimed_at  TEXT NOT NULL,
    PRIMARY KEY (deployment, entry, slot)
);
CREATE INDEX schedule_slots_by_run ON schedule_slots (run_id);
"""


# v7: the run history page (`wfops ui`) filters by deployment or status and pages newest first:
# an index per filter, ending in the creation time, serves a page without sorting the runs.
_V7 = """
CREATE INDEX runs_by_deployment ON runs (deployment, created_at);
DROP INDEX runs_by_status;
CREATE INDEX runs_by_status ON runs (status, created_at);
"""


# v8: a step's extras: what a node returned beside its output (a python node's `Result.extra`, an
# MCP tool's `_meta` and undeclared structured keys), kept for the trace only (JSON, or NULL).
_V8 = """
ALTER TABLE trace ADD COLUMN extra TEXT;
"""


# v9: step logs: what a python node printed and logged in one attempt of a step (its
# traceback too when it failed), bounded and masked, kept beside that attempt's trace entry.
_V9 = """
CREATE TABLE step_logs (
    run_id   TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    step     TEXT NOT NULL,
    attempt  INTEGER NOT NULL,
    text     TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) @WITHOUT_ROWID@;
"""


@dataclass(frozen=True)
class Migration:
    version: int
    script: str                                       # shared by every dialect
    only: Mapping[str, str] = field(default_factory=dict)  # dialect -> its own text, where it differs

    def statements(self, dialect: str) -> list[str]:
        """The statements of this step in `dialect`, in order."""
        text = self.only.get(dialect, self.script)
        for word, spelled in DIALECT_WORDS[dialect].items():
            text = text.replace(word, spelled)
        return _statements(text)


MIGRATIONS: list[Migration] = [Migration(1, _V1), Migration(2, _V2), Migration(3, _V3), Migration(4, _V4),
                               Migration(5, _V5), Migration(6, _V6), Migration(7, _V7), Migration(8, _V8),
                               Migration(9, _V9)]
LATEST = MIGRATIONS[-1].version


def current_version(conn: sqlite3.Connection) -> int:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
    if not has_table:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def refuse_newer(version: int, path: str) -> None:
    if version > LATEST:
        raise StoreError(
            f"store {path} was created by a newer wfops (schema {version}, this wfops knows {LATEST})",
            hint="upgrade wfops, or point --db / WFOPS_DB at another store")


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the store to `LATEST`; safe when several processes open a new store at once."""
    version = current_version(conn)
    refuse_newer(version, path)
    if version == LATEST:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                     "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        version = current_version(conn)  # another process may have migrated while we waited
        refuse_newer(version, path)
        for migration in MIGRATIONS:
            if migration.version <= version:
                continue
            for statement in migration.statements("sqlite"):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                         (migration.version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our transaction first; run statements one by one instead.
    # (No statement of the schema holds a `;` inside a literal.)
    return [s.strip() for s in script.split(";") if s.strip()]
