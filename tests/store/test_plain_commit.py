"""A plain step's commit on SQLite: ONE autocommitted INSERT on the store's kept cursor (a
transaction of its own), writing the very row the general path writes; anything else (an
error, extras, a cache note, a changed run row) takes the general path in BEGIN IMMEDIATE."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from wfops.engine.types import CacheNote
from wfops.errors import UnstorableValue
from wfops.store.base import _cursor_text, _trace_rows
from wfops.store.sqlite import SqliteStore

from .test_contract import entry, snap, start


def statements(store: SqliteStore, work) -> list[str]:
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        work()
    finally:
        store.conn.set_trace_callback(None)
    return seen


def raw_rows(store: SqliteStore, run_id: str) -> list[tuple]:
    return store.conn.execute("SELECT * FROM trace WHERE run_id=? ORDER BY seq", (run_id,)).fetchall()


@pytest.fixture
def store(tmp_path: Path):
    with SqliteStore(tmp_path / ".wfops" / "wfops.db") as opened:
        yield opened


def test_a_plain_step_is_one_statement_and_the_general_paths_row(store: SqliteStore) -> None:
    start(store)
    store.commit(snap(at="s1"), [entry(1)])  # the run row now says what a running run says
    plain = snap(at="s2")
    plain.cursor = {"seq": 2, "step": "a"}
    sent = statements(store, lambda: store.commit(plain, [entry(2)]))
    assert len(sent) == 1 and sent[0].startswith("INSERT INTO trace (") and "error" not in sent[0]
    assert not store.conn.in_transaction
    # Byte for byte what the general path's row builder gives (its cursor on the row).
    (general,) = _trace_rows("r1", [entry(2)], 2, _cursor_text(plain.cursor))
    assert raw_rows(store, "r1")[-1] == general
    assert store.get_run("r1").snapshot.cursor == {"seq": 2, "step": "a"}


@pytest.mark.parametrize("changed", [
    {"error": {"type": "X", "message": "m", "step": "a"}, "next": "b"},
    {"extra": {"meta": 1}},
    {"cache_note": CacheNote("k", "std.echo", "c", 0.5)},
])
def test_any_other_step_takes_the_general_path(store: SqliteStore, changed: dict) -> None:
    start(store)
    store.commit(snap(), [entry(1)])
    sent = statements(store, lambda: store.commit(snap(), [entry(2, **changed)]))
    assert sent[0] == "BEGIN IMMEDIATE" and sent[-1] == "COMMIT"


def test_a_run_row_that_changes_takes_the_general_path(store: SqliteStore) -> None:
    start(store)
    store.commit(snap(), [entry(1)])
    sent = statements(store, lambda: store.commit(snap(status="completed", outcome="ok"), [entry(2)]))
    assert sent[0] == "BEGIN IMMEDIATE" and any(s.startswith("UPDATE runs") for s in sent)
    assert store.get_run("r1").snapshot.status == "completed"


def test_an_unstorable_plain_step_writes_nothing(store: SqliteStore) -> None:
    start(store)
    store.commit(snap(), [entry(1)])
    with pytest.raises(UnstorableValue, match="lone surrogate"):
        store.commit(snap(), [entry(2, output={"value": "bad \udc80"})])
    assert [row[1] for row in raw_rows(store, "r1")] == [1] and not store.conn.in_transaction
    store.commit(snap(), [entry(2)])  # the store goes on as before
    assert [row[1] for row in raw_rows(store, "r1")] == [1, 2]


def test_a_plain_step_waits_for_another_writer(tmp_path: Path) -> None:
    # Autocommit takes the write lock as BEGIN IMMEDIATE does: it waits (busy_timeout) for a
    # writer that holds it, rather than failing at once.
    path = tmp_path / ".wfops" / "wfops.db"
    with SqliteStore(path, timeout=60) as store:
        start(store)
        store.commit(snap(), [entry(1)])
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        releasing = threading.Event()

        def release() -> None:
            releasing.set()  # before the COMMIT: a commit that did not wait returns before this
            other.execute("COMMIT")

        released = threading.Timer(0.3, release)
        released.start()
        try:
            store.commit(snap(), [entry(2)])  # blocked until the other writer commits
            waited = releasing.is_set()
        finally:
            released.join()
            other.close()
        assert waited
        assert [row[1] for row in raw_rows(store, "r1")] == [1, 2]


def test_a_change_that_wrote_the_output_itself_reuses_the_outputs_json() -> None:
    from wfops.store.rows import changes_text, dump

    output = {"items": [1, "é", {"k": None}], "n": 2.5}
    wrote = [{"path": "state.a", "value": output}, {"path": "state.b\u2028", "value": {"x": 1}},
             {"value": output, "path": "state.c"}, {"path": "state.d", "value": dict(output)}]
    # The same bytes as encoding the changes, whatever they hold.
    assert changes_text(wrote, output, dump(output)) == dump(wrote)
    assert changes_text([], output, dump(output)) == "[]"
    assert changes_text(wrote, None, None) == dump(wrote)
    # Taken: the output's own JSON is what a change that wrote the output (that object, its keys
    # in the engine's order) holds; an equal copy, or other keys' order, is encoded.
    text = changes_text(wrote, output, "OUT")
    assert text.count("OUT") == 1 and text.startswith('[{"path":"state.a","value":OUT}')


@pytest.mark.parametrize("output", [{"v": 1}, [1, 2], "text"])
def test_a_stored_change_of_the_whole_output_is_the_json_of_the_changes(store: SqliteStore, output: object) -> None:
    start(store)
    saved = entry(1, output=output, state_changes=[{"path": "state.x", "value": output}], next=None)
    store.commit(snap(), [saved])
    assert raw_rows(store, "r1")[0][8] == dump_changes([{"path": "state.x", "value": output}])


def dump_changes(changes: list) -> str:
    from wfops.store.rows import dump

    return dump(changes) or "[]"
