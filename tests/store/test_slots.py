"""Schedule slots, on every backend: a slot is claimed by the commit that creates its run,
and a slot claimed already makes that commit create nothing."""

from __future__ import annotations

import pytest

from tests.store.test_contract import ART, snap
from wfops.errors import UnknownRunError
from wfops.store.protocol import Slot, SlotTaken

SLOT = Slot("dep", "nightly", "2026-12-01T02:30:00Z")


def begin(store, run_id: str, slot: Slot | None = SLOT) -> None:
    store.begin_run(run_id, artifacts={"wf": "h1"}, normalized={"h1": ART}, meta={}, slot=slot)
    store.commit(snap(run_id), [])


def test_the_first_commit_claims_the_slot_and_a_second_claim_creates_nothing(store, store_factory) -> None:
    begin(store, "r1")
    other = store_factory()  # another process's connection
    with pytest.raises(SlotTaken) as taken:
        begin(other, "r2")
    assert taken.value.slot == SLOT
    with pytest.raises(UnknownRunError):
        store.get_run("r2")  # rolled back with the claim: no run row, no input
    [found] = store.slots("dep")
    assert (found.slot, found.run_id, found.status) == (SLOT, "r1", "running")
    assert store.slot_of("r1") == found and store.slot_of("r2") is None


def test_slots_filter_by_entry_time_and_unfinished_runs(store) -> None:
    begin(store, "r1")
    begin(store, "r2", Slot("dep", "nightly", "2026-12-02T02:30:00Z"))
    begin(store, "r3", Slot("dep", "hourly", "2026-12-02T03:00:00Z"))
    begin(store, "r4", None)  # a run no schedule started
    store.commit(snap("r1", status="completed", outcome="ok"), [])
    assert [s.run_id for s in store.slots("dep")] == ["r3", "r2", "r1"]  # newest slot first
    assert [s.run_id for s in store.slots("dep", entry="nightly", limit=1)] == ["r2"]
    assert [s.run_id for s in store.slots("dep", since="2026-12-02T00:00:00Z")] == ["r3", "r2"]
    assert [s.run_id for s in store.slots("dep", unfinished=True)] == ["r3", "r2"]
    assert store.slots("other") == []
    assert sorted(r.snapshot.run_id for r in store.list_runs(scheduled=True)) == ["r1", "r2", "r3"]
    assert len(store.list_runs()) == 4


def test_a_claim_outlives_its_run(store) -> None:
    begin(store, "r1")
    store.commit(snap("r1", status="completed", outcome="ok"), [])
    store.delete_run("r1")
    [found] = store.slots("dep")
    assert (found.run_id, found.status) == ("r1", None)
    with pytest.raises(SlotTaken):
        begin(store, "r2")
