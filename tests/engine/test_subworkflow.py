from __future__ import annotations

from wfops.sources.base import CallResult

from .helpers import make_engine, run

CHILD = {
    "name": "child",
    "input": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
    "state": {"doubled": {}},
    "output": {"doubled": "$state.doubled"},
    "steps": [
        {"id": "double", "uses": "t.double", "with": {"n": "$input.n"}, "save": {"n": "state.doubled"},
         "on": {"ok": "end", "zero": "zero"}},
        {"id": "zero", "end": "zero"},
    ],
}
PARENT = {
    "name": "parent",
    "input": {"type": "object"},
    "state": {"res": {}, "err": {}},
    "output": {"res": "$state.res", "err": "$state.err"},
    "steps": [
        {"id": "sub", "workflow": "child", "with": {"n": "$input.n"}, "save": {"doubled": "state.res"},
         "on": {"ok": "end", "zero": "was_zero"}, "catch": {"next": "broke", "save": "state.err"}},
        {"id": "was_zero", "end": "zero"},
        {"id": "broke", "end": "broken"},
    ],
}


def double(payload: dict, ctx) -> CallResult:
    if payload["n"] < 0:
        raise ValueError("negative")
    return CallResult("zero") if payload["n"] == 0 else CallResult("ok", {"n": payload["n"] * 2})


def engine():
    eng, source, sink = make_engine([PARENT, CHILD])
    source.add("double", double, outcomes=("ok", "zero"))
    return eng, source, sink


def test_child_output_is_saved_and_its_steps_are_traced_with_paths() -> None:
    eng, source, sink = engine()
    snap = run(eng.start("parent", {"n": 4}, run_id="R"))
    assert (snap.status, snap.outcome, snap.output["res"]) == ("completed", "ok", 8)
    assert [(e.step, e.kind) for e in sink.trace] == [("sub/double", "call"), ("sub", "workflow")]
    assert sink.trace[1].input == {"n": 4} and sink.trace[1].output == {"doubled": 8}
    ctx = source.called("double")[0][1]
    assert ctx.workflow == "child" and ctx.step == "sub/double" and ctx.idempotency_key == "R:sub#1/double#1"


def test_child_end_outcome_becomes_the_step_outcome() -> None:
    eng, _, _ = engine()
    snap = run(eng.start("parent", {"n": 0}))
    assert (snap.status, snap.outcome) == ("completed", "zero")


def test_child_failure_is_the_step_failure_and_catch_handles_it() -> None:
    eng, _, _ = engine()
    snap = run(eng.start("parent", {"n": -1}))
    assert snap.outcome == "broken"
    assert snap.output["err"] == {"type": "ValueError", "message": "negative", "step": "sub/double"}


def test_child_input_is_validated() -> None:
    eng, source, _ = engine()
    snap = run(eng.start("parent", {"n": "x"}))
    assert snap.outcome == "broken" and "input of workflow child" in snap.output["err"]["message"]
    assert source.calls == []


def test_subworkflow_timeout_bounds_the_whole_child() -> None:
    slow = {"name": "slow", "steps": [{"id": "nap", "uses": "std.sleep", "with": {"seconds": 5}, "next": "end"}]}
    wf = {"name": "p", "steps": [{"id": "sub", "workflow": "slow", "timeout": 0.1, "next": "end"}]}
    eng, _, _ = make_engine([wf, slow])
    snap = run(eng.start("p", {}))
    assert snap.status == "failed" and snap.error["type"] == "Timeout" and snap.error["step"] == "sub"
