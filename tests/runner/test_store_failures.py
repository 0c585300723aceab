"""A store that cannot be used ends in one clear line and exit 4 (5 for a busy run), never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.runner.helpers import env_for, wfops
from wfops.errors import StoreError
from wfops.store import open_store


def one_line_error(done, code: int, text: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert text in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_not_a_database(project: Path, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_bytes(b"this is not sqlite at all\n" * 200)
    before = bogus.read_bytes()
    for args in (("runs", "list"), ("run", "chain.local"), ("resume", "x")):
        one_line_error(wfops(project, *args, "--db", str(bogus)), 4, "not a valid wfops database")
    assert bogus.read_bytes() == before


def test_newer_schema_is_never_touched(project: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    open_store(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO schema_version VALUES (999, 'future')")
    conn.commit()
    conn.close()
    before = newer.read_bytes()
    one_line_error(wfops(project, "runs", "list", "--db", str(newer)), 4, "created by a newer wfops")
    one_line_error(wfops(project, "run", "chain.local", "--db", str(newer)), 4, "created by a newer wfops")
    assert newer.read_bytes() == before


def test_locked_store(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    open_store(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        done = wfops(project, "run", "chain.local", "--db", str(db), env=env_for(WFOPS_DB_TIMEOUT="0.3"))
        one_line_error(done, 4, "is locked by another process")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    done = wfops(project, "runs", "list", "--json", "--db", str(db))
    assert done.returncode == 0 and done.stdout.strip() == "[]"  # the refused attempt left nothing


def test_disk_full_is_a_store_error_and_keeps_committed_steps(tmp_path: Path) -> None:
    from tests.store.test_contract import entry, snap, start

    store = open_store(tmp_path / "full.db")
    start(store)
    store.commit(snap(), [entry(1)])
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(StoreError, match="disk full"):
        store.commit(snap(), [entry(2, output={"blob": "x" * 200_000})])
    assert [e.seq for e in store.trace("r1")] == [1]
    store.close()


def test_read_only_store(tmp_path: Path) -> None:
    from tests.store.test_contract import entry, snap, start

    store = open_store(tmp_path / "wfops.db")
    start(store)
    # query_only makes SQLite answer every write as a read-only database would (file
    # permissions cannot be used: the tests may run as root, who ignores them).
    store.conn.execute("PRAGMA query_only = ON")
    with pytest.raises(StoreError, match="is read-only; cannot commit a step"):
        store.commit(snap(), [entry(1)])
    assert store.trace("r1") == []
    store.close()
