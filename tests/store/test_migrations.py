"""Schema versions: upgrades keep data, and each version is recorded with its change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from wfops.errors import StoreError
from wfops.store import open_store
from wfops.store.migrations import LATEST, MIGRATIONS


def make_v1(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for statement in MIGRATIONS[0].statements("sqlite"):
        conn.execute(statement)
    conn.execute("INSERT INTO schema_version VALUES (1, 'then')")
    conn.execute("INSERT INTO runs VALUES ('old', 'd', 'wf', 'h', 'completed', 'ok', '{\"a\":1}', NULL, NULL,"
                 " '{}', 1, 't0', 't1')")
    conn.execute("INSERT INTO run_inputs VALUES ('old', '{}', '{}')")
    conn.execute("INSERT INTO trace VALUES ('old', 1, 's', 'call', 1, '{}', 'ok', '{}', '[]', 'end', NULL,"
                 " 't0', 't1')")
    conn.commit()
    conn.close()


def test_upgrade_from_v1_keeps_runs(tmp_path: Path) -> None:
    path = tmp_path / "wfops.db"
    make_v1(path)
    store = open_store(path)
    record = store.get_run("old")
    assert record.snapshot.output == {"a": 1} and record.steps == 1
    assert [e.step for e in store.trace("old")] == ["s"]
    versions = [r[0] for r in store.conn.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == list(range(1, LATEST + 1))
    store.close()


def test_fresh_store_is_at_latest_and_in_wal(tmp_path: Path) -> None:
    store = open_store(tmp_path / "wfops.db")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == LATEST
    store.close()


def test_newer_store_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "wfops.db"
    open_store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (?, 'future')", (LATEST + 1,))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="created by a newer wfops"):
        open_store(path)
    assert path.read_bytes() == before


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "wfops.db"
    path.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(StoreError, match="not a valid wfops database"):
        open_store(path)
