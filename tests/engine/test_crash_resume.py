"""A crash is simulated by a sink that raises at commit N: that commit never happened.
Resuming from what was committed must not re-run committed steps, and the step in
flight runs again with the same idempotency key."""

from __future__ import annotations

import pytest

from wfops.errors import RefusedError

from .helpers import Crash, MemorySink, make_engine, run

CHAIN = {
    "name": "chain",
    "state": {"log": {"reducer": "append"}},
    "output": {"log": "$state.log"},
    "steps": [{"id": s, "uses": "t.note", "with": {"s": s, "ctx": "$context.idempotency_key"},
               "save": {"s": "state.log"}, "next": n}
              for s, n in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "end")]],
}


def note(payload: dict, ctx) -> dict:
    return {"s": payload["s"]}


def crash_then_resume(workflows: list[dict], name: str, input: object, crash_at: int, setup) -> tuple:
    sink = MemorySink(crash_at=crash_at)
    engine, source, _ = make_engine(workflows, sink=sink)
    setup(source)
    with pytest.raises(Crash):
        run(engine.start(name, input, run_id="R"))
    before = [(name, c.idempotency_key) for name, _, c in source.calls]
    sink.crash_at = None
    snap = run(engine.resume(sink.last, sink.trace))
    after = [(name, c.idempotency_key) for name, _, c in source.calls][len(before):]
    return snap, sink, before, after


@pytest.mark.parametrize("crash_at", [2, 3, 4, 5])
def test_linear_chain_resume_reruns_only_the_step_in_flight(crash_at: int) -> None:
    snap, sink, before, after = crash_then_resume([CHAIN], "chain", {}, crash_at,
                                                  lambda s: s.add("note", note))
    assert snap.status == "completed" and snap.output == {"log": ["a", "b", "c", "d"]}
    in_flight = before[-1]
    assert after[0] == in_flight  # same step, same idempotency key
    committed = {k for _, k in before[:-1]}
    assert not committed & {k for _, k in after}
    assert [e.seq for e in sink.trace] == list(range(1, 5))
    assert [e.step for e in sink.trace] == ["a", "b", "c", "d"]


def test_resume_of_a_running_run_refuses_an_outcome() -> None:
    sink = MemorySink(crash_at=3)
    engine, source, _ = make_engine([CHAIN], sink=sink)
    source.add("note", note)
    with pytest.raises(Crash):
        run(engine.start("chain", {}))
    with pytest.raises(RefusedError):
        run(engine.resume(sink.last, sink.trace, outcome="ok"))
    with pytest.raises(RefusedError, match="incomplete"):
        run(engine.resume(sink.last, sink.trace[:-1]))


def test_loop_keys_are_stable_across_a_crash() -> None:
    loop = {"name": "loop", "state": {"n": {"reducer": "add"}}, "output": {"n": "$state.n"},
            "steps": [{"id": "tick", "uses": "t.tick", "save": {"one": "state.n"}, "next": "check"},
                      {"id": "check", "if": {"lt": ["$state.n", 3]}, "then": "tick", "else": "end"}]}
    # commits: start, tick1, check, tick2 (crash)
    snap, _, before, after = crash_then_resume([loop], "loop", {}, 4, lambda s: s.add("tick", lambda p, c: {"one": 1}))
    assert snap.output == {"n": 3}
    assert [k for _, k in before] == ["R:tick#1", "R:tick#2"]
    assert [k for _, k in after] == ["R:tick#2", "R:tick#3"]


CHILD = {"name": "child", "state": {"log": {"reducer": "append"}}, "output": {"log": "$state.log"},
         "steps": [{"id": s, "uses": "t.note", "with": {"s": s}, "save": {"s": "state.log"}, "next": n}
                   for s, n in [("x", "y"), ("y", "z"), ("z", "end")]]}
PARENT = {"name": "parent", "state": {"res": {}}, "output": {"res": "$state.res"},
          "steps": [{"id": "first", "uses": "t.note", "with": {"s": "first"}, "next": "sub"},
                    {"id": "sub", "workflow": "child", "save": "state.res", "next": "end"}]}


@pytest.mark.parametrize("crash_at", [3, 4, 5, 6])
def test_crash_inside_a_subworkflow_resumes_the_child(crash_at: int) -> None:
    snap, sink, before, after = crash_then_resume([PARENT, CHILD], "parent", {}, crash_at,
                                                  lambda s: s.add("note", note))
    assert snap.status == "completed" and snap.output == {"res": {"log": ["x", "y", "z"]}}
    assert [e.step for e in sink.trace] == ["first", "sub/x", "sub/y", "sub/z", "sub"]
    if crash_at < 6:  # the last commit is the parent's step: nothing in flight to call again
        assert after[0] == before[-1]
    committed = {k for _, k in (before if crash_at == 6 else before[:-1])}
    assert not committed & {k for _, k in after}


FAN = {"name": "fan", "state": {"out": {}}, "output": {"out": "$state.out"},
       "steps": [{"id": "fan", "foreach": "$input.items", "uses": "t.note", "with": {"s": "$item"},
                  "mode": "parallel", "concurrency": 2, "save": {"s": "state.out"}, "next": "end"}]}


@pytest.mark.parametrize("crash_at", [2, 3, 4])
def test_crash_in_a_parallel_foreach_skips_finished_items(crash_at: int) -> None:
    # Items that finish together share one commit, so how many items a crash at commit N
    # leaves behind depends on the grouping: read it from the trace at the crash.
    items = ["p", "q", "r", "s"]
    sink = MemorySink(crash_at=crash_at)
    engine, source, _ = make_engine([FAN], sink=sink)
    source.add("note", note)
    with pytest.raises(Crash):
        run(engine.start("fan", {"items": items}, run_id="R"))
    done_before = [e.step for e in sink.trace if e.kind == "item"]
    before = len(source.calls)
    sink.crash_at = None
    snap = run(engine.resume(sink.last, sink.trace))
    assert snap.output == {"out": items}
    rerun = {c.idempotency_key for _, _, c in source.calls[before:]}
    assert len(rerun) == len(items) - len(done_before)
    for step in done_before:
        assert f"R:fan#1[{step[len('fan['):-1]}]" not in rerun
    item_entries = [e for e in sink.trace if e.kind == "item"]
    assert sorted(e.step for e in item_entries) == [f"fan[{i}]" for i in range(4)]


def test_crash_inside_a_foreach_workflow_item() -> None:
    wf = {"name": "fan", "state": {"out": {}}, "output": {"out": "$state.out"},
          "steps": [{"id": "fan", "foreach": "$input.items", "workflow": "child", "save": "state.out",
                     "next": "end"}]}
    # commits: start, fan[0]/x, fan[0]/y, fan[0]/z, fan[0], fan[1]/x, fan[1]/y (crash)
    snap, sink, before, after = crash_then_resume([wf, CHILD], "fan", {"items": [1, 2]}, 7,
                                                  lambda s: s.add("note", note))
    assert snap.output["out"] == [{"log": ["x", "y", "z"]}] * 2
    assert after[0] == before[-1] == ("note", "R:fan#1[1]/y#1")
    assert len(before) + len(after) == 7
