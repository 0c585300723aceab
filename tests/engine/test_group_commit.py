"""Group commit of a parallel foreach: the items that finish in one turn of the event loop are
committed together, one sink commit (one transaction) for them all, each its own entry; a
crash loses only what was not committed, and a resume runs exactly those items again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wfops.errors import UnstorableValue

from .helpers import Crash, MemorySink, make_engine, run


def fan(concurrency: int, **step: Any) -> dict[str, Any]:
    return {"name": "fan", "state": {"out": {}}, "output": {"out": "$state.out"},
            "steps": [{"id": "fan", "foreach": "$input.items", "uses": "t.f", "with": {"x": "$item"},
                       "mode": "parallel", "concurrency": concurrency, "save": "state.out", "next": "end",
                       **step}]}


def item_commits(sink: MemorySink) -> list[list[str]]:
    """The steps of each commit that holds item entries, in commit order."""
    return [[e.step for e in entries] for _, entries in sink.commits if any(e.kind == "item" for e in entries)]


class Gates:
    """Async capabilities that finish when their item's group is let go: items of one group
    finish in one loop turn."""

    def __init__(self, groups: list[list[int]]) -> None:
        self.groups = groups
        self.events: dict[int, asyncio.Event] = {}

    def event(self, group: int) -> asyncio.Event:
        return self.events.setdefault(group, asyncio.Event())

    def group_of(self, x: int) -> int:
        return next(i for i, members in enumerate(self.groups) if x in members)

    async def f(self, payload: dict, ctx: Any) -> dict:
        await self.event(self.group_of(payload["x"])).wait()
        return {"y": payload["x"] * 10}

    async def release(self, count: int) -> None:
        for group in range(count):
            await asyncio.sleep(0.01)  # the earlier group is committed (and its tasks ended) first
            self.event(group).set()


def drive(engine: Any, gates: Gates, input: Any, run_id: str = "R") -> Any:
    async def both() -> Any:
        started = asyncio.ensure_future(engine.start("fan", input, run_id=run_id))
        await gates.release(len(gates.groups))
        return await started
    return run(both())


def test_items_that_finish_together_are_one_commit_each_its_own_entry() -> None:
    gates = Gates([[0, 1, 2], [3, 4], [5]])
    engine, source, sink = make_engine([fan(6)])
    source.add("f", gates.f)
    snap = drive(engine, gates, {"items": list(range(6))})
    assert snap.status == "completed" and snap.output == {"out": [{"y": x * 10} for x in range(6)]}
    groups = [sorted(steps) for steps in item_commits(sink)]
    assert groups == [["fan[0]", "fan[1]", "fan[2]"], ["fan[3]", "fan[4]"], ["fan[5]"]]
    items = [e for e in sink.trace if e.kind == "item"]
    assert [e.seq for e in items] == list(range(items[0].seq, items[0].seq + 6))  # numbered as if alone
    assert all(e.output == {"y": int(e.step[4]) * 10} and e.error is None for e in items)
    # The cursor committed with a group names its last entry.
    cursors = [run.cursor for run, entries in sink.commits if any(e.kind == "item" for e in entries)]
    assert [c["seq"] for c in cursors] == [max(e.seq for e in entries) for _, entries in sink.commits
                                          if any(e.kind == "item" for e in entries)]


def test_trivial_items_are_committed_concurrency_at_a_time() -> None:
    # A node that never waits: the items a semaphore lets in during one turn finish in it.
    engine, source, sink = make_engine([fan(4)])

    async def quick(payload: dict, ctx: Any) -> dict:
        return {"y": payload["x"]}

    source.add("f", quick)
    snap = run(engine.start("fan", {"items": list(range(12))}))
    assert snap.output == {"out": [{"y": x} for x in range(12)]}
    assert [len(steps) for steps in item_commits(sink)] == [4, 4, 4]


class Turns:
    """Counts the event loop's turns: a callback that schedules itself again runs once a turn."""

    def __init__(self) -> None:
        self.count = 0
        self.going = True

    def tick(self) -> None:
        self.count += 1
        if self.going:
            asyncio.get_running_loop().call_soon(self.tick)


def test_a_worker_fills_a_group_without_a_turn_per_item_and_lets_the_loop_turn_per_group() -> None:
    # Trivial items at concurrency 4: a worker takes items while a slot is free (an item holds
    # its slot until it is committed), the item that fills the group commits it at once, in
    # the turn it filled, and its worker then lets the loop turn. The four workers' first
    # steps all run in the first turn, each filling a group (items 0-15); the first worker
    # takes items 16-19 in the next turn.
    turns = Turns()
    calls: list[tuple[int, int, int]] = []  # (item, turn it was called in, items called and not committed)
    engine, source, sink = make_engine([fan(4)])
    committed: list[tuple[list[str], int]] = []

    async def quick(payload: dict, ctx: Any) -> dict:
        uncommitted = len(calls) - sum(len(steps) for steps, _ in committed)
        calls.append((payload["x"], turns.count, uncommitted))
        return {"y": payload["x"]}

    store = sink.commit

    def commit(run_: Any, entries: list) -> None:
        store(run_, entries)
        if any(e.kind == "item" for e in entries):
            committed.append((sorted(e.step for e in entries), turns.count))

    sink.commit = commit  # type: ignore[method-assign]
    source.add("f", quick)

    async def counted() -> Any:
        turns.tick()
        try:
            return await engine.start("fan", {"items": list(range(20))})
        finally:
            turns.going = False

    assert run(counted()).output == {"out": [{"y": x} for x in range(20)]}
    first = calls[0][1]
    groups = [[f"fan[{x}]" for x in sorted(range(g, g + 4), key=str)] for g in range(0, 20, 4)]
    assert committed == [(groups[0], first), (groups[1], first), (groups[2], first), (groups[3], first),
                         (groups[4], first + 1)]
    assert [(x, turn) for x, turn, _ in calls] == [(x, first if x < 16 else first + 1) for x in range(20)]
    assert max(uncommitted for _, _, uncommitted in calls) == 3  # each started with a slot free


def test_a_worker_waits_for_a_slot_while_the_items_before_wait_for_their_commit() -> None:
    # Items 0-2 wait on the node, then all finish in one turn: their commit comes at the start
    # of the next turn, and no item starts before it (3 slots, all held).
    gates = Gates([[0, 1, 2], [3, 4, 5]])
    engine, source, sink = make_engine([fan(3)])
    started: list[tuple[int, int]] = []  # (item, the number of item commits before it started)

    async def f(payload: dict, ctx: Any) -> dict:
        started.append((payload["x"], len(item_commits(sink))))
        return await gates.f(payload, ctx)

    source.add("f", f)
    snap = drive(engine, gates, {"items": list(range(6))})
    assert snap.status == "completed" and snap.output == {"out": [{"y": x * 10} for x in range(6)]}
    assert [sorted(steps) for steps in item_commits(sink)] == [[f"fan[{x}]" for x in range(3)],
                                                               [f"fan[{x}]" for x in range(3, 6)]]
    assert started == [(0, 0), (1, 0), (2, 0), (3, 1), (4, 1), (5, 1)]


def test_a_serial_foreach_commits_each_item_alone() -> None:
    engine, source, sink = make_engine([fan(4, mode="serial")])
    source.add("f", lambda p, c: {"y": p["x"]})
    run(engine.start("fan", {"items": [1, 2, 3]}))
    assert item_commits(sink) == [["fan[0]"], ["fan[1]"], ["fan[2]"]]


@pytest.mark.parametrize("crash_group", [0, 1, 2])
def test_a_crash_at_a_group_commit_keeps_exactly_the_committed_items(crash_group: int) -> None:
    groups = [[0, 1, 2], [3, 4], [5]]
    gates = Gates(groups)
    sink = MemorySink(crash_at=2 + crash_group)  # commit 1 creates the run; then one per group
    engine, source, _ = make_engine([fan(6)], sink=sink)
    source.add("f", gates.f)
    with pytest.raises(Crash):
        drive(engine, gates, {"items": list(range(6))})
    kept = {e.step for e in sink.trace if e.kind == "item"}
    assert kept == {f"fan[{x}]" for group in groups[:crash_group] for x in group}
    called = len(source.calls)

    sink.crash_at = None
    again = Gates([[x for x in range(6)]])  # the resume: every remaining item at once
    source.handlers["f"] = again.f

    async def resume() -> Any:
        resumed = asyncio.ensure_future(engine.resume(sink.last, sink.trace))
        await again.release(1)
        return await resumed
    snap = run(resume())
    assert snap.status == "completed" and snap.output == {"out": [{"y": x * 10} for x in range(6)]}
    rerun = sorted(call[1]["x"] for call in source.calls[called:])
    assert rerun == [x for group in groups[crash_group:] for x in group]  # none of the kept ones
    items = [e.step for e in sink.trace if e.kind == "item"]
    assert sorted(items) == [f"fan[{x}]" for x in range(6)]  # each item committed exactly once


class Picky(MemorySink):
    """Refuses (as unstorable, storing nothing) any commit holding the entry of item `bad`."""

    def __init__(self, bad: str) -> None:
        super().__init__()
        self.bad = bad
        self.refused = 0

    def commit(self, run: Any, entries: list) -> None:
        if any(e.step == self.bad and e.error is None for e in entries):
            self.refused += 1
            raise UnstorableValue("the value cannot be stored")
        super().commit(run, entries)


def test_an_unstorable_item_in_a_group_fails_alone_and_the_others_are_kept() -> None:
    sink = Picky("fan[1]")
    gates = Gates([[0, 1, 2]])
    wf = fan(3, on_item_error="collect", errors="state.errs", save_each={"y": "state.each"})
    wf["state"].update({"errs": {}, "each": {"reducer": "append"}})
    wf["output"] = {"out": "$state.out", "errs": "$state.errs", "each": "$state.each"}
    engine, source, _ = make_engine([wf], sink=sink)
    source.add("f", gates.f)
    snap = drive(engine, gates, {"items": [0, 1, 2]})
    assert sink.refused == 2  # the group, then fan[1] alone (then stored as a failure)
    assert item_commits(sink) == [["fan[0]"], ["fan[1]"], ["fan[2]"]]
    assert snap.status == "completed"
    assert snap.output["out"] == [{"y": 0}, {"y": 20}]
    assert [e["index"] for e in snap.output["errs"]] == [1]
    assert snap.output["errs"][0]["type"] == "UnstorableValue"
    assert snap.output["each"] == [0, 20]  # the failed item's write is undone, the others kept
    failed = next(e for e in sink.trace if e.step == "fan[1]")
    assert failed.error is not None and failed.output is None and failed.state_changes == []
