"""Group commit on SQLite: N items' entries are ONE transaction (one BEGIN, one COMMIT),
against one per item when each is committed alone."""

from __future__ import annotations

from pathlib import Path

from wfops.store.sqlite import SqliteStore

from .test_contract import entry, snap, start
from .test_plain_commit import statements


def transactions(store: SqliteStore, work) -> int:
    """The write transactions `work` makes: each BEGIN IMMEDIATE ... COMMIT, and each write
    statement sent outside one (autocommit: a transaction of its own, as a plain step's is)."""
    count, open_ = 0, False
    for statement in statements(store, work):
        if statement == "BEGIN IMMEDIATE":
            assert not open_
            open_ = True
        elif statement == "COMMIT":
            assert open_
            open_, count = False, count + 1
        elif not open_ and statement.split(None, 1)[0] in ("INSERT", "UPDATE", "DELETE"):
            count += 1
    assert not open_
    return count


def test_n_ready_items_are_one_transaction(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / ".wfops" / "wfops.db") as store:
        start(store, "group")
        start(store, "alone")
        group = [entry(seq, step=f"fan[{seq - 1}]", kind="item") for seq in range(1, 9)]
        alone = [entry(seq, step=f"fan[{seq - 1}]", kind="item") for seq in range(1, 9)]
        assert transactions(store, lambda: store.commit(snap("group"), group)) == 1
        assert transactions(store, lambda: [store.commit(snap("alone"), [e]) for e in alone]) == 8
        assert store.trace("group") == store.trace("alone")
