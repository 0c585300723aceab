from __future__ import annotations

import pytest

from wfops.engine.errors import InvalidInput
from wfops.exits import for_error
from wfops.sources.base import CallResult

from .helpers import make_engine, run

CHAIN = {
    "name": "chain",
    "input": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}},
    "state": {"a": {}, "b": {}},
    "output": {"a": "$state.a", "b": "$state.b", "lit": "$$money", "nested": ["$input.x", {"k": "$state.a"}]},
    "steps": [
        {"id": "one", "uses": "std.echo", "with": {"value": "$input.x"}, "save": {"value": "state.a"},
         "next": "two"},
        {"id": "two", "uses": "std.echo", "with": {"value": {"deep": ["$state.a", "$$x", "$input.nope.no"]}},
         "save": {"value": "state.b"}, "next": "end"},
    ],
}


def test_linear_chain_commits_each_step_and_projects_output() -> None:
    engine, _, sink = make_engine([CHAIN])
    snap = run(engine.start("chain", {"x": 5}, run_id="r1"))
    assert snap.status == "completed" and snap.outcome == "ok"
    assert snap.output == {"a": 5, "b": {"deep": [5, "$x", None]}, "lit": "$money", "nested": [5, {"k": 5}]}
    # first commit: the run exists before its first step
    first, entries = sink.commits[0]
    assert first.status == "running" and entries == []
    assert [len(e) for _, e in sink.commits] == [0, 1, 1]
    one, two = sink.trace
    assert (one.seq, one.step, one.kind, one.attempt, one.outcome, one.next) == (1, "one", "call", 1, "ok", "two")
    assert one.input == {"value": 5} and one.output == {"value": 5}
    assert one.state_changes == [{"path": "state.a", "value": 5}]
    assert two.next == "end" and two.error is None
    assert one.started_at.endswith("Z") and one.ended_at >= one.started_at
    assert sink.last.cursor["seq"] == 2 and snap.to_public()["status"] == "completed"


def test_invalid_input_is_refused_before_any_commit() -> None:
    engine, _, sink = make_engine([CHAIN])
    with pytest.raises(InvalidInput) as info:
        run(engine.start("chain", {"x": "five"}))
    assert "$.x" in info.value.message and "integer" in info.value.message
    assert for_error(info.value) == 2 and sink.commits == []


def test_unknown_workflow_is_refused() -> None:
    engine, _, sink = make_engine([CHAIN])
    with pytest.raises(Exception, match="no workflow named"):
        run(engine.start("nope", {}))
    assert sink.commits == []


def test_context_and_idempotency_keys_differ_per_visit_in_a_loop() -> None:
    loop = {
        "name": "loop",
        "state": {"n": {"reducer": "add"}},
        "output": {"n": "$state.n"},
        "steps": [
            {"id": "tick", "uses": "t.tick", "with": {"ctx": "$context"}, "save": {"one": "state.n"}, "next": "check"},
            {"id": "check", "if": {"lt": ["$state.n", 3]}, "then": "tick", "else": "done"},
            {"id": "done", "end": "ok"},
        ],
    }
    engine, source, _ = make_engine([loop], deployment="dep")
    source.add("tick", lambda p, c: {"one": 1})
    snap = run(engine.start("loop", None, run_id="R"))
    assert snap.output == {"n": 3}
    keys = [c.idempotency_key for _, c in source.called("tick")]
    assert keys == ["R:tick#1", "R:tick#2", "R:tick#3"]
    ctx = source.called("tick")[0][0]["ctx"]
    assert ctx["run_id"] == "R" and ctx["workflow"] == "loop" and ctx["deployment"] == "dep"
    assert ctx["step"] == "tick" and ctx["attempt"] == 1


def test_end_step_outcome_and_non_ok_outcome_without_output_saves_nothing() -> None:
    wf = {
        "name": "ends",
        "state": {"got": {}},
        "output": {"got": "$state.got"},
        "steps": [
            {"id": "look", "uses": "t.look", "save": "state.got", "on": {"ok": "end", "empty": "nothing"}},
            {"id": "nothing", "end": "empty"},
        ],
    }
    engine, source, sink = make_engine([wf])
    source.add("look", lambda p, c: CallResult("empty", None), outcomes=("ok", "empty"))
    snap = run(engine.start("ends", {}))
    assert (snap.status, snap.outcome, snap.output) == ("completed", "empty", {"got": None})
    assert sink.trace[0].state_changes == [] and sink.trace[1].kind == "end"


def test_output_schema_failure_fails_the_run() -> None:
    wf = {**CHAIN, "output_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    engine, _, sink = make_engine([wf])
    snap = run(engine.start("chain", {"x": 1}))
    assert snap.status == "failed" and snap.error["type"] == "InvalidOutput"
    assert "$.a" in snap.error["message"] and snap.output is None
    assert sink.last.status == "failed"


def test_start_step_and_save_into_nested_object_keys() -> None:
    wf = {
        "name": "nested",
        "start": "b",
        "state": {"obj": {"type": "object", "default": {"keep": 1}}},
        "output": {"obj": "$state.obj"},
        "steps": [
            {"id": "a", "end": "never"},
            {"id": "b", "uses": "std.echo", "with": {"value": "v"}, "save": {"value": "state.obj.x.y"},
             "next": "end"},
        ],
    }
    engine, _, sink = make_engine([wf])
    snap = run(engine.start("nested", {}))
    assert snap.output == {"obj": {"keep": 1, "x": {"y": "v"}}}
    assert sink.trace[0].state_changes == [{"path": "state.obj.x.y", "value": "v"}]


def test_a_malformed_path_refuses_the_run_instead_of_crashing() -> None:
    wf = {"name": "bad", "steps": [{"id": "a", "uses": "std.echo", "with": {"value": "$nope.x"}, "next": "end"}]}
    engine, _, sink = make_engine([wf])
    with pytest.raises(Exception, match="unknown path root") as info:
        run(engine.start("bad", {}))
    assert for_error(info.value) == 2 and sink.commits == []
