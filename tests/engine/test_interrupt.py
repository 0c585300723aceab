from __future__ import annotations

import copy

import pytest

from wfops.engine.errors import InvalidInput
from wfops.errors import RefusedError
from wfops.exits import for_error

from .helpers import make_engine, run

APPROVAL = {
    "name": "approval",
    "input": {"type": "object", "properties": {"amount": {"type": "number"}}},
    "state": {"by": {}, "log": {"reducer": "append"}},
    "output": {"by": "$state.by", "log": "$state.log"},
    "steps": [
        {"id": "before", "uses": "t.note", "with": {"what": "before"}, "save": {"what": "state.log"},
         "next": "ask"},
        {"id": "ask", "interrupt": "approval", "request": {"amount": "$input.amount", "lit": "$$x"},
         "resume_schema": {"type": "object", "required": ["by"], "properties": {"by": {"type": "string"}}},
         "save": {"by": "state.by"}, "on": {"approved": "after", "rejected": "no"}},
        {"id": "after", "uses": "t.note", "with": {"what": "after"}, "save": {"what": "state.log"},
         "next": "end"},
        {"id": "no", "end": "rejected"},
    ],
}


def interrupted():
    engine, source, sink = make_engine([APPROVAL])
    source.add("note", lambda p, c: {"what": p["what"]})
    snap = run(engine.start("approval", {"amount": 12}, run_id="R"))
    return engine, source, sink, snap


def test_interrupt_stops_the_run_with_the_resolved_request() -> None:
    _, _, sink, snap = interrupted()
    assert snap.status == "interrupted"
    assert snap.interrupt.to_public() == {"id": "R:ask#1", "step": "ask", "kind": "approval",
                                          "request": {"amount": 12, "lit": "$x"}}
    assert snap.interrupt.outcomes == ["approved", "rejected"]
    assert snap.to_public()["interrupt"]["kind"] == "approval"
    pending = sink.trace[-1]
    assert pending.kind == "interrupt" and pending.outcome is None and pending.next is None


def test_resume_with_valid_payload_saves_and_routes_and_nothing_before_reruns() -> None:
    engine, source, sink, snap = interrupted()
    done = run(engine.resume(snap, sink.trace, outcome="approved", payload={"by": "ana"}))
    assert done.status == "completed" and done.output == {"by": "ana", "log": ["before", "after"]}
    assert [p["what"] for p, _ in source.called("note")] == ["before", "after"]
    ask = [e for e in sink.trace if e.step == "ask"]
    assert ask[-1].outcome == "approved" and ask[-1].output == {"by": "ana"} and ask[-1].next == "after"
    assert [e.seq for e in sink.trace] == list(range(1, len(sink.trace) + 1))


def test_resume_with_other_outcome_routes_there() -> None:
    engine, _, sink, snap = interrupted()
    done = run(engine.resume(snap, sink.trace, outcome="rejected", payload={"by": "bo"}))
    assert (done.status, done.outcome) == ("completed", "rejected")


@pytest.mark.parametrize(("outcome", "payload", "error"), [
    ("approved", {"by": 3}, InvalidInput),
    ("approved", None, InvalidInput),
    ("maybe", {"by": "ana"}, RefusedError),
    (None, {"by": "ana"}, RefusedError),
])
def test_bad_resume_is_refused_and_commits_nothing(outcome, payload, error) -> None:
    engine, source, sink, snap = interrupted()
    before = copy.deepcopy(sink.commits)
    with pytest.raises(error) as info:
        run(engine.resume(snap, sink.trace, outcome=outcome, payload=payload))
    assert for_error(info.value) == 2
    assert sink.commits == before and len(source.calls) == 1


def test_finished_runs_cannot_be_resumed() -> None:
    engine, _, sink, snap = interrupted()
    done = run(engine.resume(snap, sink.trace, outcome="rejected", payload={"by": "x"}))
    with pytest.raises(RefusedError, match="is completed; nothing to resume"):
        run(engine.resume(done, sink.trace))


def test_interrupt_inside_a_subworkflow_resumes_in_the_child() -> None:
    parent = {"name": "parent", "state": {"res": {}}, "output": {"res": "$state.res"},
              "steps": [{"id": "sub", "workflow": "approval", "with": {"amount": 3}, "save": "state.res",
                         "on": {"ok": "end", "rejected": "end"}}]}
    engine, source, sink = make_engine([parent, APPROVAL])
    source.add("note", lambda p, c: {"what": p["what"]})
    snap = run(engine.start("parent", {}))
    assert snap.status == "interrupted" and snap.interrupt.step == "sub/ask"
    done = run(engine.resume(snap, sink.trace, outcome="approved", payload={"by": "cy"}))
    assert done.status == "completed"
    assert done.output == {"res": {"by": "cy", "log": ["before", "after"]}}
    assert len(source.called("note")) == 2


def test_resume_keeps_the_artifact_and_deployment_the_run_started_with() -> None:
    engine, source, sink = make_engine([APPROVAL], deployment="d", artifacts={"approval": "abc"})
    source.add("note", lambda p, c: {"what": p["what"]})
    snap = run(engine.start("approval", {"amount": 1}))
    later, _, _ = make_engine([APPROVAL], source=source, sink=sink)  # a caller that passes neither
    done = run(later.resume(snap, sink.trace, outcome="approved", payload={"by": "x"}))
    assert (done.artifact, done.deployment) == ("abc", "d")
    assert source.called("note")[-1][1].deployment == "d"
