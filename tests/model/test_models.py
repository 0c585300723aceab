"""The file models themselves: each step kind, routing, and the sources and deployment models."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from wfops.model.objects import (
    CallStep,
    ConditionStep,
    Deployment,
    EndStep,
    ForeachStep,
    InterruptStep,
    McpSource,
    PythonSource,
    SourcesFile,
    SubworkflowStep,
    Workflow,
)
from wfops.model.plain import validated
from wfops.model.workflow import step_kind_of


# What every reader gets: the plain objects (the models decide and word what is invalid).
def workflow(*steps: dict, **top: object) -> Workflow:
    made = validated("workflow", {"name": "w", "steps": list(steps), **top})
    assert isinstance(made, Workflow)
    return made


def test_call_step() -> None:
    wf = workflow({"id": "a", "uses": "notes.read", "with": {"path": "$input.path"},
                   "save": {"text": "state.text"}, "retry": {"attempts": 3, "backoff": 0.5},
                   "timeout": 30, "catch": {"next": "b", "save": "state.err"}, "on": {"empty": "b"},
                   "next": "b"},
                  {"id": "b", "end": "ok"})
    step = wf.steps[0]
    assert isinstance(step, CallStep) and step.kind == "call"
    assert step.with_ == {"path": "$input.path"} and step.retry is not None and step.retry.attempts == 3
    assert step.routes() == {"ok": "b", "empty": "b"}
    dumped = step.to_data(drop_none=True)
    assert dumped["with"] == {"path": "$input.path"} and "with_" not in dumped
    assert wf.start_step == "a"


def test_subworkflow_condition_foreach_interrupt_end() -> None:
    wf = workflow(
        {"id": "sub", "workflow": "child", "with": {"x": 1}, "save": "state.child", "next": "cond"},
        {"id": "cond", "if": {"and": [{"exists": "$state.child"}, {"not": {"eq": ["$state.n", 0]}}]},
         "then": "each", "else": "done"},
        {"id": "each", "foreach": "$state.items", "uses": "std.echo", "with": {"value": "$item"},
         "mode": "parallel", "concurrency": 4, "on_item_error": "collect", "errors": "state.errs",
         "next": "ask"},
        {"id": "ask", "interrupt": "approval", "request": {"q": "$state.child"},
         "resume_schema": {"type": "object"}, "on": {"approved": "end", "rejected": "done"}},
        {"id": "done", "end": "rejected"},
        start="sub",
    )
    kinds = [type(s) for s in wf.steps]
    assert kinds == [SubworkflowStep, ConditionStep, ForeachStep, InterruptStep, EndStep]
    assert [s.kind for s in wf.steps] == ["workflow", "condition", "foreach", "interrupt", "end"]
    assert wf.steps[0].routes() == {"ok": "cond"}
    assert wf.steps[1].routes() == {"then": "each", "else": "done"}
    assert wf.steps[2].routes() == {"ok": "ask"}
    assert wf.steps[3].routes() == {"approved": "end", "rejected": "done"}
    assert wf.steps[4].routes() == {}
    assert wf.steps[1].to_data()["if"]["and"][0] == {"exists": "$state.child"}


def test_foreach_may_run_a_subworkflow() -> None:
    wf = workflow({"id": "each", "foreach": "$state.items", "workflow": "child"})
    assert isinstance(wf.steps[0], ForeachStep) and wf.steps[0].workflow == "child"


def test_step_kind_of_raw_dicts() -> None:
    assert step_kind_of({"id": "x", "foreach": "$a", "uses": "a.b"}) == "foreach"
    assert step_kind_of({"id": "x", "with": {}}) is None
    assert step_kind_of("text") is None


def test_state_field_reducer_and_schema() -> None:
    wf = workflow({"id": "a", "end": "ok"},
                  state={"log": {"type": "array", "reducer": "append"}, "n": {"type": "integer"}})
    assert wf.state["log"].reducer == "append" and wf.state["n"].reducer == "replace"
    assert wf.state["log"].json_schema() == {"type": "array"}
    assert workflow({"id": "a", "end": "ok"}, state={"x": {}}).state["x"].json_schema() == {}


@pytest.mark.parametrize("bad", [
    {"id": "end", "end": "ok"},
    {"id": "a", "uses": "std.echo", "next": "b", "on": {"ok": "b"}},
    {"id": "a", "foreach": "$state.x"},
    {"id": "a", "foreach": "$state.x", "uses": "a.b", "workflow": "c"},
    {"id": "a", "if": {"eq": [1]}, "then": "b", "else": "b"},
    {"id": "a", "if": {"and": []}, "then": "b", "else": "b"},
    {"id": "a", "if": {"exists": "state.x"}, "then": "b", "else": "b"},
    {"id": "a", "interrupt": "approval", "on": {}},
    {"id": "a", "uses": "std.echo", "save": "text"},
    {"id": "a", "uses": "std.echo", "timeout": 0},
    {"id": "a", "uses": "std.echo", "unknown": 1},
    {"id": "a", "uses": "std.echo", "end": "ok"},
])
def test_invalid_steps_are_rejected(bad: dict) -> None:
    with pytest.raises(ValidationError):
        workflow(bad, {"id": "b", "end": "ok"})


def test_sources_models() -> None:
    parsed = validated("sources", {"sources": {
        "ops": {"kind": "python", "module": "examples.ops"},
        "clock": {"kind": "mcp", "command": ["python", "-m", "mcp_server_time"], "env": {"TZ": "UTC"}},
        "remote": {"kind": "mcp", "url": "http://127.0.0.1:8931/mcp"},
    }})
    assert isinstance(parsed, SourcesFile) and isinstance(parsed.sources["ops"], PythonSource)
    assert isinstance(parsed.sources["clock"], McpSource) and parsed.sources["clock"].timeout == 30
    for bad in ({"kind": "mcp", "command": "python -m server"},
                {"kind": "mcp"},
                {"kind": "mcp", "command": ["a"], "url": "http://x"},
                {"kind": "mcp", "url": "http://x", "env": {"A": "1"}},
                {"kind": "mcp", "command": []},
                {"kind": "python", "module": "../evil"}):
        with pytest.raises(ValidationError):
            validated("sources", {"sources": {"s": bad}})
    with pytest.raises(ValidationError):
        validated("sources", {"sources": {"std": {"kind": "python", "module": "x"}}})


def test_deployment_model() -> None:
    d = validated("deployment", {"name": "w.local", "workflow": "w@sha256:abcd12", "bindings": {"n": "r"}})
    assert isinstance(d, Deployment)
    assert (d.workflow_name, d.pin, d.drift) == ("w", "abcd12", "fail")
    assert d.concrete_source("n") == "r" and d.concrete_source("other") == "other"
    plain = validated("deployment", {"name": "d", "workflow": "w"})
    assert isinstance(plain, Deployment)
    assert plain.pin is None and plain.workflow_name == "w"
    with pytest.raises(ValidationError):
        validated("deployment", {"name": "d", "workflow": "w@sha256:xyz"})
