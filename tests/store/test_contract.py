"""The contract every Store backend must pass."""

from __future__ import annotations

from dataclasses import replace

import pytest

from wfops.engine.types import Interrupt, RunSnapshot, TraceEntry
from wfops.errors import RunBusyError, StoreError, UnknownRunError, UnstorableValue

ART = {"name": "wf", "steps": [{"id": "a", "uses": "std.echo"}]}


def snap(run_id: str = "r1", status: str = "running", **kw) -> RunSnapshot:
    return RunSnapshot(run_id=run_id, workflow="wf", artifact="h1", deployment="dep", status=status,
                       input={"x": 1}, cursor={"at": kw.pop("at", "a")}, **kw)


def entry(seq: int, step: str = "a", **kw) -> TraceEntry:
    base = dict(seq=seq, step=step, kind="call", attempt=1, input={"value": seq}, outcome="ok",
                output={"value": seq}, state_changes=[{"path": "state.x", "value": seq}],
                next="b", error=None, started_at="2026-01-01T00:00:00Z",
                ended_at="2026-01-01T00:00:01Z")
    base.update(kw)
    return TraceEntry(**base)


def start(store, run_id: str = "r1") -> None:
    store.begin_run(run_id, artifacts={"wf": "h1", "child": "h2"},
                    normalized={"h1": ART, "h2": {"name": "child", "steps": []}},
                    meta={"bindings": {"n": "m"}, "secrets": ["TOKEN"]})
    store.commit(snap(run_id), [])


def test_first_commit_creates_the_run_with_its_artifacts(store) -> None:
    start(store)
    record = store.get_run("r1")
    assert record.snapshot.status == "running" and record.snapshot.input == {"x": 1}
    assert record.steps == 0 and record.meta == {"bindings": {"n": "m"}, "secrets": ["TOKEN"]}
    assert store.run_workflows("r1") == {"wf": ("h1", ART), "child": ("h2", {"name": "child", "steps": []})}


def test_steps_round_trip_in_order(store) -> None:
    start(store)
    for seq in range(1, 4):
        store.commit(snap(at=f"s{seq}"), [entry(seq)])
    trace = store.trace("r1")
    assert [e.seq for e in trace] == [1, 2, 3]
    assert trace[1] == entry(2)
    assert store.get_run("r1").steps == 3
    assert store.get_run("r1").snapshot.cursor == {"at": "s3"}
    assert [e.seq for e in store.trace("r1", from_seq=2, limit=1)] == [2]


def test_the_record_of_a_run_just_driven_adds_what_the_store_knows(store) -> None:
    start(store)
    for seq in range(1, 3):  # running: its step count and time come from the trace
        store.commit(snap(at=f"s{seq}"), [entry(seq)])
    running = snap(at="s2", output={"as": "returned"})
    assert store.record_of(running) == replace(store.get_run("r1"), snapshot=running)
    done = replace(running, status="completed")
    store.commit(done, [entry(3)])
    assert store.record_of(done) == replace(store.get_run("r1"), snapshot=done)
    with pytest.raises(UnknownRunError):
        store.record_of(snap("nope"))


def test_commit_is_all_or_nothing(store) -> None:
    start(store)
    store.commit(snap(), [entry(1)])
    with pytest.raises(StoreError):  # a duplicate seq must abort the whole commit
        store.commit(snap(status="completed", outcome="ok"), [entry(2), entry(1)])
    assert [e.seq for e in store.trace("r1")] == [1]
    assert store.get_run("r1").snapshot.status == "running"


def test_terminal_states_and_interrupt_round_trip(store) -> None:
    start(store)
    interrupt = Interrupt(id="i1", step="ask", kind="approval", request={"q": "ok?"},
                          outcomes=["yes", "no"], resume_schema={"type": "object"})
    store.commit(snap(status="interrupted", interrupt=interrupt), [entry(1)])
    got = store.get_run("r1").snapshot
    assert got.interrupt == interrupt
    assert got.to_public()["interrupt"] == {"id": "i1", "step": "ask", "kind": "approval",
                                             "request": {"q": "ok?"}}
    store.commit(snap(status="failed", interrupt=None, error={"type": "X", "message": "m", "step": "a"}), [])
    got = store.get_run("r1").snapshot
    assert got.status == "failed" and got.error["type"] == "X" and got.interrupt is None


def test_refused_runs_leave_nothing(store) -> None:
    store.begin_run("r9", artifacts={"wf": "h1"}, normalized={"h1": ART}, meta={})
    assert store.list_runs() == []


def test_list_filters_and_orders_newest_first(store) -> None:
    for i in range(5):
        start(store, f"r{i}")
    store.commit(snap("r2", status="completed", outcome="ok"), [])
    assert [r.snapshot.run_id for r in store.list_runs()] == ["r4", "r3", "r2", "r1", "r0"]
    assert [r.snapshot.run_id for r in store.list_runs(limit=2)] == ["r4", "r3"]
    assert [r.snapshot.run_id for r in store.list_runs(status="completed")] == ["r2"]
    assert store.list_runs(deployment="nope") == []


def test_unknown_ids_raise(store) -> None:
    for call in (store.get_run, store.trace, store.delete_run, store.run_workflows):
        with pytest.raises(UnknownRunError):
            call("nope")


def test_delete_and_prune(store) -> None:
    start(store, "a")
    start(store, "b")
    start(store, "c")
    store.commit(snap("a"), [entry(1)])
    store.commit(snap("b", status="completed", outcome="ok"), [])
    store.delete_run("a")
    with pytest.raises(UnknownRunError):
        store.trace("a")
    assert store.prune(1) == 0          # nothing that old
    assert store.prune(0) == 1          # b is finished; c still running stays
    assert [r.snapshot.run_id for r in store.list_runs()] == ["c"]


def test_second_connection_sees_commits(store_factory) -> None:
    one, two = store_factory(), store_factory()
    start(one)
    one.commit(snap(at="s1"), [entry(1)])
    one.commit(snap(at="s2"), [entry(2)])
    assert [e.seq for e in two.trace("r1")] == [1, 2]
    mid = two.get_run("r1")  # a reader sees the newest cursor and step count mid-run
    assert mid.snapshot.cursor == {"at": "s2"} and mid.steps == 2 and mid.snapshot.status == "running"
    one.commit(snap(status="completed", outcome="ok", at="done"), [entry(3)])
    done = two.get_run("r1")
    assert done.snapshot.cursor == {"at": "done"} and done.steps == 3 and done.snapshot.outcome == "ok"


def test_a_new_process_continues_a_run(store_factory) -> None:
    one = store_factory()
    start(one)
    one.commit(snap(at="s1"), [entry(1)])
    one.close()
    two = store_factory()  # like `wfops resume` after a crash
    two.commit(snap(at="s2"), [entry(2)])
    two.commit(snap(at="s3"), [entry(3)])
    record = two.get_run("r1")
    assert record.snapshot.cursor == {"at": "s3"} and record.steps == 3
    assert record.snapshot.input == {"x": 1}


def test_run_lock_is_exclusive(store_factory) -> None:
    one, two = store_factory(), store_factory()
    with one.run_lock("r1"):
        assert two.run_is_driven("r1")
        with pytest.raises(RunBusyError, match=r"pid \d+"), two.run_lock("r1"):
            pass
    assert not two.run_is_driven("r1")
    with two.run_lock("r1"):
        pass


def test_a_new_run_never_takes_over_an_existing_id(store) -> None:
    start(store)
    store.commit(snap(status="completed", outcome="ok"), [])
    store.begin_run("r1", artifacts={}, normalized={}, meta={})
    with pytest.raises(StoreError):  # the old run must stay as it was
        store.commit(snap(), [])
    assert store.get_run("r1").snapshot.status == "completed"


def test_a_cancel_request_is_seen_by_another_connection_until_cleared(store_factory) -> None:
    driver, other = store_factory(), store_factory()
    start(driver)
    assert not driver.cancel_requested("r1")
    other.request_cancel("r1")
    other.request_cancel("r1")  # asking twice is one request
    assert driver.cancel_requested("r1")
    driver.clear_cancel("r1")
    assert not other.cancel_requested("r1")


def test_mark_cancelled_keeps_the_newest_cursor_and_drops_the_interrupt(store_factory) -> None:
    driver, other = store_factory(), store_factory()
    start(driver)
    driver.commit(snap(at="s1"), [entry(1)])
    driver.commit(snap(at="s2"), [entry(2)])  # a plain step: the cursor rides on its trace row
    other.request_cancel("r1")
    other.mark_cancelled("r1")
    record = other.get_run("r1")
    assert record.snapshot.status == "cancelled" and record.snapshot.interrupt is None
    assert record.snapshot.cursor == {"at": "s2"} and record.steps == 2
    assert not other.cancel_requested("r1")
    assert [r.snapshot.run_id for r in other.list_runs(status="cancelled")] == ["r1"]
    assert other.prune(0) == 1  # a cancelled run is a stopped one


def test_fork_run_copies_the_trace_up_to_a_seq_and_nothing_else(store) -> None:
    start(store)
    for seq in range(1, 4):
        store.commit(snap(at=f"s{seq}"), [entry(seq)])
    store.fork_run("r1", "r2", upto_seq=2, input={"x": 2}, meta={"forked_from": {"run_id": "r1"}})
    fork = store.get_run("r2")
    assert fork.snapshot.status == "running" and fork.snapshot.input == {"x": 2}
    assert (fork.snapshot.workflow, fork.snapshot.artifact, fork.snapshot.deployment) == ("wf", "h1", "dep")
    assert fork.meta == {"forked_from": {"run_id": "r1"}} and fork.steps == 2
    assert store.trace("r2") == store.trace("r1")[:2]
    assert store.run_workflows("r2") == store.run_workflows("r1")
    assert len(store.trace("r1")) == 3 and store.get_run("r1").snapshot.input == {"x": 1}
    store.commit(snap("r2", status="completed", outcome="ok"), [entry(3, step="z")])
    assert store.trace("r2")[-1].step == "z" and store.trace("r1")[-1].step == "a"


def test_import_run_copies_whole_runs_once(store, tmp_path) -> None:
    from wfops.store import open_store
    from wfops.store.copy import copy_runs

    source = open_store(tmp_path / "source" / "wfops.db")
    try:
        start(source, "done")
        source.commit(snap("done", at="s1"), [entry(1)])
        source.commit(snap("done", status="completed", outcome="ok", at="end"), [entry(2)])
        start(source, "asks")
        interrupt = Interrupt(id="i1", step="ask", kind="approval", request={"q": "ok?"},
                              outcomes=["yes"], resume_schema=None)
        source.commit(snap("asks", status="interrupted", interrupt=interrupt), [entry(1)])
        with source.run_lock("live"):  # driven right now: not copied
            start(source, "live")
            first = copy_runs(source, store)
        assert (first.copied, first.present, first.busy) == (["done", "asks"], [], ["live"])
        for run_id in ("done", "asks"):
            want, got = source.get_run(run_id), store.get_run(run_id)
            assert got == want
            assert store.trace(run_id) == source.trace(run_id)
            assert store.run_workflows(run_id) == source.run_workflows(run_id)
        again = copy_runs(source, store)
        assert (again.copied, again.present, again.busy) == (["live"], ["done", "asks"], [])
        assert len(store.list_runs()) == 3
    finally:
        source.close()


@pytest.mark.parametrize("bad", [{"text": "\ud800"}, {"n": float("nan")}])
def test_a_value_the_store_cannot_hold_is_unstorable_and_stores_nothing(store, bad) -> None:
    # A step's value, and the run's input written with its first commit: the engine fails the
    # step on UnstorableValue, so no backend may leak its driver's error or store half a run.
    with pytest.raises(UnstorableValue):
        store.begin_run("r1", artifacts={"wf": "h1"}, normalized={"h1": ART}, meta={})
        store.commit(RunSnapshot(run_id="r1", workflow="wf", artifact="h1", deployment="dep", status="running",
                                 input=bad, cursor={}), [])
    with pytest.raises(UnknownRunError):
        store.get_run("r1")
    start(store, "r2")
    with pytest.raises(UnstorableValue):
        store.commit(snap("r2"), [entry(1, output=bad)])
    assert store.trace("r2") == []


class _NotSerialized(dict):
    """A normalized form the store must not serialize: its text was given."""

    def items(self):  # type: ignore[override]
        raise AssertionError("the store serialized a form whose canonical text it was given")


def test_a_given_canonical_text_is_stored_as_the_artifact(store) -> None:
    from wfops.canonical import canonical_json

    store.begin_run("r1", artifacts={"wf": "h1", "child": "h2"},
                    normalized={"h1": _NotSerialized(ART), "h2": {"name": "child", "steps": []}},
                    meta={}, texts={"h1": canonical_json(ART)})
    store.commit(snap("r1"), [])
    assert store.run_workflows("r1") == {"wf": ("h1", ART), "child": ("h2", {"name": "child", "steps": []})}


def test_list_since_a_stamp(store) -> None:
    start(store, "old")
    start(store, "new")
    newest = store.get_run("new").created_at
    assert [r.snapshot.run_id for r in store.list_runs(since=newest)] == ["new"]
    assert [r.snapshot.run_id for r in store.list_runs(since="2000-01-01T00:00:00.000000Z")] == ["new", "old"]
    assert store.list_runs(since="2999-01-01T00:00:00.000000Z") == []


def test_step_logs_round_trip_and_go_with_their_run(store) -> None:
    from wfops.store.protocol import StepLog

    start(store, "a")
    store.commit(snap("a"), [entry(1, step="each[0]"), entry(2, step="each[1]"), entry(3, step="other")])
    logs = [StepLog(2, "each[1]", 1, "two\n"), StepLog(1, "each[0]", 1, "one ✓\n"), StepLog(3, "other", 2, "x")]
    store.add_step_logs("a", logs)
    store.add_step_logs("a", [StepLog(1, "each[0]", 1, "again")])  # a seq kept already stays
    assert store.step_logs("a") == sorted(logs, key=lambda log: log.seq)
    assert [log.seq for log in store.step_logs("a", "each")] == [1, 2]
    assert [log.seq for log in store.step_logs("a", "other")] == [3]
    with pytest.raises(UnknownRunError):
        store.step_logs("nope")
    store.delete_run("a")
    start(store, "a")
    assert store.step_logs("a") == []


def test_a_run_log_comes_just_before_the_entry_it_was_stored_with(store) -> None:
    from wfops.store.protocol import StepLog

    start(store, "a")
    store.commit(snap("a"), [entry(1, step="each[0]"), entry(2, step="each")])
    store.add_step_logs("a", [StepLog(1, "each[0]", 1, "one\n"), StepLog(2, "each", 1, "two\n"),
                              StepLog(-2, "", 0, "the run's\n"), StepLog(0, "", 0, "before any\n")])
    assert [log.seq for log in store.step_logs("a")] == [0, 1, -2, 2]
    assert [log.seq for log in store.step_logs("a", "each")] == [1, 2]  # a step's logs only


def test_one_commit_of_many_items_writes_the_rows_committing_each_item_alone_writes(store) -> None:
    start(store, "alone")
    start(store, "group")
    items = [entry(seq, step=f"fan[{seq - 1}]", kind="item", next=None) for seq in range(1, 5)]
    for item in items:
        store.commit(snap("alone", at=item.step), [item])
    store.commit(snap("group", at="fan[3]"), items)
    assert store.trace("group") == store.trace("alone") == items
    assert store.get_run("group").snapshot == replace(store.get_run("alone").snapshot, run_id="group")
    assert store.get_run("group").steps == 4


def test_a_commit_of_many_items_is_all_or_nothing(store) -> None:
    start(store)
    store.commit(snap(), [entry(1, step="fan[0]", kind="item")])
    with pytest.raises(StoreError):  # a duplicate seq aborts the whole group
        store.commit(snap(), [entry(2, step="fan[1]", kind="item"), entry(1, step="fan[2]", kind="item")])
    assert [e.step for e in store.trace("r1")] == ["fan[0]"]
