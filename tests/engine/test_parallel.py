"""The parallel step: branches overlap, see the state at the fork, join through the reducers in
branch-name order whatever order they finish in, fail or collect, and resume after a crash
without re-running finished branch steps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.engine.helpers import Crash, MemorySink, make_engine, run

STATE = {"log": {"type": "array", "reducer": "append", "default": []},
         "total": {"type": "integer", "reducer": "add", "default": 0},
         "last": {"type": "string"},
         "errs": {"type": "array"}}


def flow(branches: dict[str, list[dict[str, Any]]], **extra: Any) -> dict[str, Any]:
    return {"name": "w", "state": STATE, "output": {"log": "$state.log", "total": "$state.total",
                                                    "last": "$state.last", "errs": "$state.errs"},
            "steps": [{"id": "seed", "uses": "t.note", "with": {"tag": "seed", "n": 1},
                       "save": {"tag": "state.log", "n": "state.total"}, "next": "par"},
                      {"id": "par", "parallel": branches, "next": "end", **extra}]}


def note(tag: str, n: int = 0, then: str = "end", id: str | None = None) -> dict[str, Any]:
    return {"id": id or tag, "uses": "t.note", "with": {"tag": tag, "n": n, "seen": "$state.log"},
            "save": {"tag": "state.log", "n": "state.total"}, "next": then}


def gated_source(engine_source: Any, events: list[str], gates: dict[str, asyncio.Event] | None = None) -> None:
    async def handler(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        events.append(f"start {payload['tag']}")
        gate = (gates or {}).get(payload["tag"])
        if gate is not None:
            await gate.wait()
        events.append(f"end {payload['tag']}")
        if payload["tag"].startswith("bad"):
            raise RuntimeError(f"{payload['tag']} broke")
        return {"tag": payload["tag"], "n": payload["n"], "last": payload["tag"], "seen": payload.get("seen")}

    engine_source.add("note", handler)


def test_branches_overlap_and_join_in_branch_name_order() -> None:
    engine, source, sink = make_engine([flow({"b": [note("b1", 10, "b2"), note("b2", 20)],
                                              "a": [note("a1", 100)]})])
    events: list[str] = []
    gates = {"a1": asyncio.Event()}

    async def drive() -> Any:
        # `a1` waits until branch b has finished both its steps: b finishes first, yet a joins first.
        task = asyncio.ensure_future(engine.start("w", {}))
        while "end b2" not in events:
            await asyncio.sleep(0.001)
        gates["a1"].set()
        return await task

    gated_source(source, events, gates)
    snap = run(drive())
    assert snap.status == "completed", snap.error
    assert events.index("start a1") < events.index("end b2")  # overlapped: a1 started before b ended
    assert snap.output["log"] == ["seed", "a1", "b1", "b2"]  # branch-name order, not finish order
    assert snap.output["total"] == 131
    assert snap.output["last"] is None  # no branch writes the `replace` field (that would be a ConcurrentWrite)
    # Each branch saw the state as it was at the fork, not the other's writes.
    seen = {p["tag"]: p.get("seen") for p, _ in source.called("note")}
    assert seen["a1"] == ["seed"] and seen["b1"] == ["seed"] and seen["b2"] == ["seed", "b1"]
    par = sink.trace[-1]
    assert (par.step, par.kind, par.output) == ("par", "parallel", {"a": "ok", "b": "ok"})
    assert {e.step for e in sink.trace} >= {"par/a/a1", "par/b/b1", "par/b/b2"}


def test_a_failing_branch_fails_the_step_and_cancels_the_others() -> None:
    engine, source, sink = make_engine([flow({"a": [note("bad", 1)], "b": [note("b1", 1, "b2"), note("b2")]})])
    events: list[str] = []
    gated_source(source, events, {"b1": asyncio.Event()})  # never opens: b is cancelled in flight
    snap = run(engine.start("w", {}))
    assert snap.status == "failed"
    assert snap.error == {"type": "RuntimeError", "message": "branch a: bad broke", "step": "par/a/bad"}
    assert "end b1" not in events and "start b2" not in events


def test_collect_lets_the_others_finish_and_saves_the_failures() -> None:
    engine, source, sink = make_engine([flow({"a": [note("bad", 1)], "b": [note("b1", 5)]},
                                             on_branch_error="collect", errors="state.errs")])
    gated_source(source, [])
    snap = run(engine.start("w", {}))
    assert snap.status == "completed", snap.error
    assert snap.output["log"] == ["seed", "b1"] and snap.output["total"] == 6
    assert snap.output["errs"] == [{"branch": "a", "type": "RuntimeError", "message": "bad broke",
                                    "step": "par/a/bad"}]


@pytest.mark.parametrize("crash_at", [3, 4, 5])
def test_a_crash_mid_parallel_resumes_without_redoing_finished_branch_steps(crash_at: int) -> None:
    branches = {"a": [note("a1", 1, "a2"), note("a2", 2)], "b": [note("b1", 10, "b2"), note("b2", 20)]}
    engine, source, sink = make_engine([flow(branches)], sink=MemorySink(crash_at=crash_at))
    gated_source(source, [])
    with pytest.raises(Crash):
        run(engine.start("w", {}))
    committed = [e.step for e in sink.trace]
    snapshot = sink.last
    engine2, source2, sink2 = make_engine([flow(branches)])
    gated_source(source2, [])
    snap = run(engine2.resume(snapshot, sink.trace))
    assert snap.status == "completed", snap.error
    assert snap.output["log"] == ["seed", "a1", "a2", "b1", "b2"] and snap.output["total"] == 34
    rerun = [p["tag"] for p, _ in source2.called("note")]
    done_before = {s.rsplit("/", 1)[-1] for s in committed}
    assert not done_before & set(rerun)  # no committed step ran again
