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

# v5: step logs: what a python node printed and logged in one attempt of a step (its
# traceback too when it failed), bounded and masked, kept beside that attempt's trace entry.
_V5_STEP_LOGS = """
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
                               Migration(5, _V5_STEP_LOGS)]
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
