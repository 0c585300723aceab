"""A routing loop ends in a failed run, not an endless one."""

from __future__ import annotations

from .helpers import make_engine, run

LOOP = {
    "name": "loop",
    "state": {"n": {"type": "integer", "reducer": "add"}},
    "steps": [
        {"id": "tick", "uses": "std.echo", "with": {"value": 1}, "save": {"value": "state.n"}, "next": "again"},
        {"id": "again", "if": {"ge": ["$state.n", 0]}, "then": "tick", "else": "done"},
        {"id": "done", "end": "ok"},
    ],
}
CALLER = {
    "name": "caller",
    "steps": [{"id": "inner", "workflow": "loop", "next": "end"}],
}


def test_a_loop_stops_at_max_steps_with_a_step_limit_error() -> None:
    engine, _, sink = make_engine([LOOP], max_steps=50)
    final = run(engine.start("loop", {}))
    assert final.status == "failed"
    assert final.error["type"] == "StepLimit" and "50 steps" in final.error["message"]
    assert len(sink.trace) == 50  # every step up to the limit is committed, none after


def test_the_limit_counts_the_steps_of_subworkflows_too() -> None:
    engine, _, sink = make_engine([CALLER, LOOP], max_steps=30)
    final = run(engine.start("caller", {}))
    assert final.status == "failed" and "StepLimit" in str(final.error)
    assert len(sink.trace) <= 31  # the child's 30 and, at most, the parent's own entry


def test_a_finishing_run_is_not_limited_by_the_default() -> None:
    engine, _, _ = make_engine([LOOP])
    assert engine.max_steps == 100_000
