"""Items of a parallel foreach that finish together are committed in one transaction, each
its own trace row; an item whose value cannot be stored fails alone, its group-mates kept."""

from __future__ import annotations

import asyncio
from typing import Any

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.errors import UnstorableValue

from .helpers import MemorySink, make_engine, run


def fan(**step: Any) -> dict[str, Any]:
    return {"name": "fan", "state": {"out": {"type": "array"}, "each": {"reducer": "append"}},
            "output": {"out": "$state.out", "each": "$state.each"},
            "steps": [{"id": "fan", "foreach": "$input.items", "uses": "t.wait", "with": {"n": "$item"},
                       "mode": "parallel", "next": "end", **step}]}


def together(count: int) -> Any:
    """An async capability whose calls all return in the same turn of the event loop, once
    `count` of them are waiting (as the calls of one Dask chunk do)."""
    arrived: list[asyncio.Future[None]] = []

    async def wait(payload: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        gate = asyncio.get_running_loop().create_future()
        arrived.append(gate)
        if len(arrived) == count:
            for waiting in arrived:
                waiting.set_result(None)
        await gate
        n = payload["n"]
        return {"n": n}

    return wait


def test_items_that_finish_together_are_one_commit_of_one_row_each() -> None:
    engine, source, sink = make_engine([fan(save="state.out")])
    source.add("wait", together(6))
    snap = run(engine.start("fan", {"items": [0, 1, 2, 4, 5, 6]}))
    assert snap.status == "completed"
    items = [entries for _, entries in sink.commits if any(e.kind == "item" for e in entries)]
    assert len(items) == 1
    assert sorted(e.step for e in items[0]) == [f"fan[{i}]" for i in range(6)]
    assert [e.seq for e in items[0]] == list(range(items[0][0].seq, items[0][0].seq + 6))


class RefusesThree(MemorySink):
    """A sink that cannot store item 3's output (as a store meets a value that slipped past
    the checks where values enter): a commit holding it stores nothing."""

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        if any(e.kind == "item" and e.output == {"n": 3} for e in entries):
            raise UnstorableValue("item 3 cannot be stored")
        super().commit(run, entries)


def test_an_unstorable_item_fails_alone_and_its_group_mates_are_kept() -> None:
    engine, source, sink = make_engine([fan(on_item_error="collect", save="state.out")], sink=RefusesThree())
    source.add("wait", together(5))
    snap = run(engine.start("fan", {"items": [0, 1, 2, 3, 4]}))
    assert snap.status == "completed", snap.error
    assert snap.output is not None and snap.output["out"] == [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 4}]
    items = {e.step: e for e in sink.trace if e.kind == "item"}
    assert sorted(items) == [f"fan[{i}]" for i in range(5)]
    assert items["fan[3]"].error is not None and items["fan[3]"].error["type"] == "UnstorableValue"
    assert all(items[f"fan[{i}]"].error is None for i in (0, 1, 2, 4))
    assert len([e for e in sink.trace if e.kind == "item"]) == 5  # nothing stored twice
