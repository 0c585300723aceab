"""A plain group's commit on SQLite (a parallel foreach's items that finished in one loop
turn): ONE transaction on the store's kept cursor (one statement, where the group fits in
one), its plain entries written without their NULL columns, the run row left alone; the very
rows the general path writes. An entry with an error or extras keeps its full row; a cache
note, a large output or a changed run row takes the general path."""

from __future__ import annotations

from pathlib import Path

import pytest

from wfops.engine.types import CacheNote
from wfops.errors import UnstorableValue
from wfops.store.base import _cursor_text, _trace_rows
from wfops.store.queries import GROUP_ROWS
from wfops.store.rows import LARGE_OUTPUT
from wfops.store.sqlite import SqliteStore

from .test_contract import entry, snap, start
from .test_plain_commit import raw_rows, statements


@pytest.fixture
def store(tmp_path: Path):
    with SqliteStore(tmp_path / ".wfops" / "wfops.db") as opened:
        yield opened


def item(seq: int, **kw):
    """An item's entry as the engine makes it: no `next`."""
    return entry(seq, **{"step": f"fan[{seq - 1}]", "kind": "item", "state_changes": [], "next": None, **kw})


def items(first: int, n: int, **kw) -> list:
    return [item(seq, **kw) for seq in range(first, first + n)]


def general_rows(run, entries) -> list[tuple]:
    """What the general path's row builder gives for the group: the cursor on the newest row."""
    return _trace_rows(run.run_id, entries, max(e.seq for e in entries), _cursor_text(run.cursor))


def test_a_plain_group_is_one_transaction_without_null_columns(store: SqliteStore) -> None:
    start(store)
    group, run = items(1, 8), snap(at="fan[7]")
    writes = statements(store, lambda: store.commit(run, group))
    # No UPDATE of the run row, and no parameter bound as NULL: neither `error`, `extra` nor
    # `next` is named, and `cursor` only in the newest row's INSERT.
    assert writes and all(s.startswith("INSERT INTO trace (") for s in writes)
    assert not any("error" in s or "extra" in s or "next" in s for s in writes)
    # ONE multi-row INSERT for the eight rows, sent alone (no BEGIN, no COMMIT: one statement
    # is a transaction of its own); the newest's cursor bound, the others' a literal NULL.
    assert len(writes) == 1 and writes[0].count("NULL") == 7
    assert not store.conn.in_transaction
    assert raw_rows(store, "r1") == general_rows(run, group)
    record = store.get_run("r1")
    assert record.steps == 8 and record.snapshot.cursor == {"at": "fan[7]"}


def test_the_newest_entry_carries_the_cursor_whatever_the_order(store: SqliteStore) -> None:
    start(store)
    group = items(1, 4)
    group.reverse()  # finished out of seq order
    run = snap(at="fan[3]")
    store.commit(run, group)
    assert raw_rows(store, "r1") == general_rows(run, sorted(group, key=lambda e: e.seq))
    assert [row[13] for row in raw_rows(store, "r1")] == [None, None, None, _cursor_text(run.cursor)]


def test_a_group_larger_than_one_statement_holds_is_written_in_parts(store: SqliteStore) -> None:
    start(store)
    group, run = items(1, 2 * GROUP_ROWS + 3), snap(at="fan[130]")
    sent = statements(store, lambda: store.commit(run, group))
    assert sent[0] == "BEGIN IMMEDIATE" and sent[-1] == "COMMIT" and len(sent) == 2 + 3
    stored = raw_rows(store, "r1")
    assert stored == general_rows(run, group)
    assert [row[1] for row in stored if row[13] is not None] == [2 * GROUP_ROWS + 3]


@pytest.mark.parametrize("newest_is_plain", [True, False])
def test_an_item_with_an_error_or_extras_keeps_its_full_row(store: SqliteStore, newest_is_plain: bool) -> None:
    start(store)
    error = {"type": "Boom", "message": "m", "step": "fan[1]"}
    group = items(1, 4)
    group[1] = item(2, outcome="error", error=error)
    group[2] = item(3, extra={"attempts": [1, 2]})
    if not newest_is_plain:
        group[3] = item(4, extra={"note": "last"})
    run = snap(at="fan[3]")
    sent = statements(store, lambda: store.commit(run, group))
    assert sent[0] == "BEGIN IMMEDIATE" and sent[-1] == "COMMIT"
    assert any("error" in s and "extra" in s for s in sent)  # the full rows' INSERT
    stored = raw_rows(store, "r1")
    assert stored == general_rows(run, group)
    assert stored[1][10] == '{"type":"Boom","message":"m","step":"fan[1]"}'
    assert stored[2][14] == '{"attempts":[1,2]}'
    assert stored[3][13] == _cursor_text(run.cursor)
    trace = store.trace("r1")
    assert trace[1].error == error and trace[2].extra == {"attempts": [1, 2]}


@pytest.mark.parametrize("newest", [True, False])
def test_an_entry_with_a_next_keeps_its_full_row(store: SqliteStore, newest: bool) -> None:
    """Items have no `next`; a group entry that has one (whatever made it) is written with it."""
    start(store)
    group = items(1, 4)
    at = 3 if newest else 1
    group[at] = item(at + 1, next="b")
    run = snap(at="fan[3]")
    sent = statements(store, lambda: store.commit(run, group))
    assert any("error" in s and "extra" in s for s in sent)  # its row through `insert_trace`
    stored = raw_rows(store, "r1")
    assert stored == general_rows(run, group)
    assert [row[9] for row in stored] == [None] * at + ["b"] + [None] * (3 - at)


@pytest.mark.parametrize("changed", [
    {"cache_note": CacheNote("k", "std.echo", "c", 0.5)},
    {"output": {"value": "x" * LARGE_OUTPUT}},
])
def test_a_cache_note_or_a_large_output_takes_the_general_path(store: SqliteStore, changed: dict) -> None:
    start(store)
    group = items(1, 3)
    group[1] = item(2, **changed)
    run = snap(at="fan[2]")
    sent = statements(store, lambda: store.commit(run, group))
    assert any("error" in s and "extra" in s for s in sent)  # every row through `insert_trace`
    assert raw_rows(store, "r1")[0][:13] == general_rows(run, group)[0][:13]
    assert [t.output for t in store.trace("r1")] == [e.output for e in group]


def test_a_run_row_that_changes_takes_the_general_path(store: SqliteStore) -> None:
    start(store)
    run = snap(status="failed", outcome="error")
    sent = statements(store, lambda: store.commit(run, items(1, 3)))
    assert any(s.startswith("UPDATE runs") for s in sent)
    assert store.get_run("r1").snapshot.status == "failed"


def test_an_unstorable_item_writes_nothing_of_its_group(store: SqliteStore) -> None:
    start(store)
    group = items(1, 4)
    group[2] = item(3, output={"value": "bad \udc80"})
    with pytest.raises(UnstorableValue, match="lone surrogate"):
        store.commit(snap(at="fan[3]"), group)
    assert raw_rows(store, "r1") == [] and not store.conn.in_transaction
    store.commit(snap(at="fan[3]"), items(1, 4))  # the store goes on as before
    assert [row[1] for row in raw_rows(store, "r1")] == [1, 2, 3, 4]
