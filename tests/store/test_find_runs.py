"""The run history page's queries, on every backend: filters, pages, counts by status."""

from __future__ import annotations

from tests.store.test_contract import snap, start
from wfops.store.protocol import RunFilter


def _ids(records) -> list[str]:
    return [r.snapshot.run_id for r in records]


def test_find_runs_filters_pages_and_counts(store) -> None:
    for i in range(6):
        start(store, f"r{i}")
    store.commit(snap("r1", status="completed", outcome="ok"), [])
    store.commit(snap("r2", status="completed", outcome="partial"), [])
    store.commit(snap("r3", status="failed", error={"type": "E", "message": "m"}), [])
    everything = RunFilter()
    assert _ids(store.find_runs(everything)) == ["r5", "r4", "r3", "r2", "r1", "r0"]
    assert _ids(store.find_runs(everything, offset=2, limit=2)) == ["r3", "r2"]
    assert _ids(store.find_runs(everything, offset=6)) == []
    assert _ids(store.find_runs(RunFilter(status="completed"))) == ["r2", "r1"]
    assert _ids(store.find_runs(RunFilter(outcome="partial"))) == ["r2"]
    assert _ids(store.find_runs(RunFilter(deployment="nope"))) == []
    assert store.count_runs(everything) == {"running": 3, "completed": 2, "failed": 1}
    # The status filter is left out of the counts: they say what each status would show.
    assert store.count_runs(RunFilter(status="failed")) == {"running": 3, "completed": 2, "failed": 1}
    assert store.count_runs(RunFilter(outcome="ok")) == {"completed": 1}


def test_find_runs_bounds_creation_time(store) -> None:
    for i in range(3):
        start(store, f"r{i}")
    stamps = [r.created_at for r in store.find_runs(RunFilter())]  # newest first
    assert _ids(store.find_runs(RunFilter(since=stamps[1]))) == ["r2", "r1"]
    assert _ids(store.find_runs(RunFilter(until=stamps[1]))) == ["r0"]
    assert _ids(store.find_runs(RunFilter(since="2999-01-01T00:00:00.000000Z"))) == []
