from __future__ import annotations

import asyncio

import pytest

from wfops.errors import CapabilityError

from .helpers import make_engine, run


def fan(**step: object) -> dict:
    base = {"id": "fan", "foreach": "$input.items", "uses": "t.work", "with": {"x": "$item", "i": "$index"},
            "save": "state.results", "next": "end"}
    return {"name": "fan", "state": {"results": {"reducer": "extend"}, "errors": {}, "vs": {}},
            "output": {"results": "$state.results", "errors": "$state.errors", "vs": "$state.vs"},
            "steps": [{**base, **step}]}


def work_source(source) -> list[int]:
    active: list[int] = []
    peak: list[int] = [0]

    async def work(payload: dict, ctx) -> dict:
        active.append(1)
        peak[0] = max(peak[0], len(active))
        # later items finish first, so completion order differs from item order
        await asyncio.sleep(0.002 * (10 - payload["x"]))
        active.pop()
        if payload["x"] == 3:
            raise CapabilityError("three is bad")
        return {"v": payload["x"] * 10, "i": payload["i"]}

    source.add("work", work)
    return peak


def test_serial_foreach_keeps_item_order() -> None:
    engine, source, sink = make_engine([fan()])
    work_source(source)
    snap = run(engine.start("fan", {"items": [1, 2, 4]}, run_id="R"))
    assert snap.output["results"] == [{"v": 10, "i": 0}, {"v": 20, "i": 1}, {"v": 40, "i": 2}]
    assert [e.step for e in sink.trace] == ["fan[0]", "fan[1]", "fan[2]", "fan"]
    assert [c.idempotency_key for _, c in source.called("work")] == ["R:fan#1[0]", "R:fan#1[1]", "R:fan#1[2]"]


def test_parallel_foreach_respects_concurrency_and_item_order() -> None:
    engine, source, sink = make_engine([fan(mode="parallel", concurrency=3, save={"v": "state.vs"})])
    peak = work_source(source)
    snap = run(engine.start("fan", {"items": [1, 2, 4, 5, 6, 7, 8]}))
    assert snap.output["vs"] == [10, 20, 40, 50, 60, 70, 80]
    assert peak[0] == 3
    item_steps = [e.step for e in sink.trace if e.kind == "item"]
    assert item_steps != sorted(item_steps)  # they finished out of order


@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_collect_records_errors_and_keeps_other_results(mode: str) -> None:
    engine, source, _ = make_engine([fan(mode=mode, on_item_error="collect", errors="state.errors")])
    work_source(source)
    snap = run(engine.start("fan", {"items": [1, 3, 4]}))
    assert snap.status == "completed"
    assert [r["v"] for r in snap.output["results"]] == [10, 40]
    assert snap.output["errors"] == [{"index": 1, "type": "CapabilityError", "message": "three is bad"}]


def test_skip_drops_failed_items_silently() -> None:
    engine, source, _ = make_engine([fan(on_item_error="skip", errors="state.errors")])
    work_source(source)
    snap = run(engine.start("fan", {"items": [3, 4]}))
    assert snap.output["results"] == [{"v": 40, "i": 1}] and snap.output["errors"] is None


@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_fail_mode_fails_the_step_and_stops_starting_items(mode: str) -> None:
    engine, source, _ = make_engine([fan(mode=mode, concurrency=1)])
    work_source(source)
    snap = run(engine.start("fan", {"items": [1, 3, 4, 5]}))
    assert snap.status == "failed" and snap.error["message"] == "item 1: three is bad"
    assert snap.error["step"] == "fan" and len(source.calls) == 2


def test_foreach_over_a_workflow_body_and_non_list() -> None:
    child = {"name": "child", "state": {"y": {}}, "output": {"y": "$state.y"},
             "steps": [{"id": "e", "uses": "std.echo", "with": {"value": "$input.x"}, "save": {"value": "state.y"},
                        "next": "end"}]}
    wf = fan(workflow="child", mode="parallel", with_={})
    wf["steps"][0].pop("uses")
    wf["steps"][0].pop("with_")
    wf["steps"][0]["with"] = {"x": "$item"}
    engine, _, sink = make_engine([wf, child])
    snap = run(engine.start("fan", {"items": ["a", "b"]}))
    assert snap.output["results"] == [{"y": "a"}, {"y": "b"}]
    assert {e.step for e in sink.trace} == {"fan[0]/e", "fan[1]/e", "fan[0]", "fan[1]", "fan"}
    snap = run(engine.start("fan", {"items": "nope"}))
    assert snap.status == "failed" and snap.error["type"] == "NotAList"


def test_a_store_error_in_a_parallel_foreach_propagates_and_stops_other_items() -> None:
    from wfops.errors import StoreError

    from .helpers import MemorySink

    class FailingSink(MemorySink):
        def commit(self, run, entries) -> None:
            if entries and entries[0].step == "fan[0]":
                raise StoreError("disk full")
            super().commit(run, entries)

    finished: list[int] = []

    async def slow(payload: dict, ctx) -> dict:
        await asyncio.sleep(0.01 if payload["x"] == 0 else 0.3)
        finished.append(payload["x"])
        return {"v": payload["x"]}

    engine, source, sink = make_engine([fan(mode="parallel")], sink=FailingSink())
    source.add("work", slow)

    async def go() -> None:
        with pytest.raises(StoreError, match="disk full"):
            await engine.start("fan", {"items": [0, 1, 2]})
        await asyncio.sleep(0.4)

    run(go())
    assert finished == [0]  # the other items were cancelled, not left running


def test_items_are_retried_and_a_failing_foreach_can_be_caught() -> None:
    tries: dict[int, int] = {}

    def work(payload: dict, ctx) -> dict:
        tries[payload["x"]] = ctx.attempt
        if payload["x"] == 2 or ctx.attempt < 2:
            raise CapabilityError(f"no {payload['x']}")
        return {"v": payload["x"]}

    wf = fan(retry={"attempts": 2, "backoff": 0}, catch={"next": "end", "save": "state.errors"})
    engine, source, sink = make_engine([wf])
    source.add("work", work)
    snap = run(engine.start("fan", {"items": [1, 2]}))
    assert snap.status == "completed" and tries == {1: 2, 2: 2}
    assert snap.output["errors"] == {"type": "CapabilityError", "message": "item 1: no 2", "step": "fan"}
    assert [e.attempt for e in sink.trace if e.kind == "item"] == [2, 2]


def test_interrupts_cannot_run_inside_a_foreach_body() -> None:
    child = {"name": "child", "steps": [{"id": "ask", "interrupt": "approval", "on": {"ok": "end"}}]}
    wf = fan(on_item_error="collect", errors="state.errors")
    wf["steps"][0] = {k: v for k, v in wf["steps"][0].items() if k not in ("uses", "with")}
    wf["steps"][0]["workflow"] = "child"
    engine, _, _ = make_engine([wf, child])
    snap = run(engine.start("fan", {"items": [1]}))
    assert snap.status == "completed"
    assert snap.output["errors"][0]["type"] == "InterruptInForeach"


def test_each_parallel_item_reads_its_own_item_index_and_context() -> None:
    # The items' `with:` share one scope, set just before each evaluation: items that
    # overlap (each waits) must still each see their own item, index, context and state.
    with_ = {"x": "$item", "i": "$index", "step": "$context.step", "key": "$context.idempotency_key",
             "vs": "$state.vs"}
    engine, source, _ = make_engine([fan(mode="parallel", concurrency=3, **{"with": with_})])

    async def work(payload: dict, ctx) -> dict:
        await asyncio.sleep(0.001 * (5 - payload["i"]))
        return {"v": payload}

    source.add("work", work)
    snap = run(engine.start("fan", {"items": [10, 11, 12, 13, 14]}, run_id="R"))
    assert [r["v"] for r in snap.output["results"]] == [
        {"x": 10 + i, "i": i, "step": f"fan[{i}]", "key": f"R:fan#1[{i}]", "vs": None} for i in range(5)]


def test_a_run_finds_a_capability_once_for_all_its_calls() -> None:
    from wfops.sources.registry import BoundResolver

    from .helpers import TestSource

    asked: list[str] = []

    class Counted(BoundResolver):
        def caller(self, ref: str):  # type: ignore[no-untyped-def]
            asked.append(f"caller {ref}")
            return super().caller(ref)

        def call(self, ref: str, payload, context):  # type: ignore[no-untyped-def]
            asked.append(f"call {ref}")
            return super().call(ref, payload, context)

    source = TestSource()
    engine, _, _ = make_engine([fan(mode="parallel", concurrency=2)], source=source)
    engine.resolver = Counted({"t": source})

    async def work(payload: dict, ctx) -> dict:
        return {"v": payload["x"]}

    source.add("work", work)
    snap = run(engine.start("fan", {"items": [1, 2, 3, 4, 5]}))
    assert snap.status == "completed" and snap.output["results"] == [{"v": x} for x in range(1, 6)]
    assert asked == ["caller t.work"]  # not once per item
