"""Group commit on SQLite: N items' entries are ONE transaction (one BEGIN, one COMMIT),
against one per item when each is committed alone."""

from __future__ import annotations

from pathlib import Path

from wfops.store.sqlite import SqliteStore

from .test_contract import entry, snap, start


def transactions(store: SqliteStore, work) -> int:
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        work()
    finally:
        store.conn.set_trace_callback(None)
    assert seen.count("BEGIN IMMEDIATE") == seen.count("COMMIT")
    return seen.count("COMMIT")


def test_n_ready_items_are_one_transaction(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / ".wfops" / "wfops.db") as store:
        start(store, "group")
        start(store, "alone")
        group = [entry(seq, step=f"fan[{seq - 1}]", kind="item") for seq in range(1, 9)]
        alone = [entry(seq, step=f"fan[{seq - 1}]", kind="item") for seq in range(1, 9)]
        assert transactions(store, lambda: store.commit(snap("group"), group)) == 1
        assert transactions(store, lambda: [store.commit(snap("alone"), [e]) for e in alone]) == 8
        assert store.trace("group") == store.trace("alone")
