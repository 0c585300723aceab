"""Planning a long workflow shares what steps have alike (a `with:` of names to paths, a `save`),
so a 2,000-step chain is planned in a few milliseconds; what is shared must behave as if each
step had its own."""

from __future__ import annotations

import pytest

from wfops.engine import plan as plan_module
from wfops.engine import values
from wfops.engine.plan import compile_save, compile_step, compile_workflow
from wfops.engine.values import Scope, compile_value
from wfops.model.paths import PathSyntaxError


def scope(**state: object) -> Scope:
    return Scope({"v": 1}, dict(state), None, {})


def test_steps_passing_the_same_paths_share_one_getter_that_builds_a_new_value_each_time() -> None:
    first, second = compile_value({"value": "$state.n"}), compile_value({"value": "$state.n"})
    assert first is second
    one, two = first(scope(n=1)), first(scope(n=2))
    assert one == {"value": 1} and two == {"value": 2} and one is not first(scope(n=1))
    assert compile_value({"value": "$state.m"}) is not first
    assert compile_value({"value": "$$state.n"})(scope(n=1)) == {"value": "$state.n"}  # escaped: text


def test_a_constant_is_never_shared_between_steps() -> None:
    # A capability that changed its payload in place must not change another step's.
    first, second = compile_value({"value": "same"}), compile_value({"value": "same"})
    assert first(scope()) == second(scope()) == {"value": "same"}
    assert first(scope()) is not second(scope())


def test_values_that_only_look_alike_are_not_confused() -> None:
    # Keys of the sharing are exact: 1, 1.0 and true are different JSON.
    assert compile_value({"value": 1})(scope()) == {"value": 1}
    assert compile_value({"value": True})(scope())["value"] is True
    assert compile_value({"a": "$state.n", "b": 1})(scope(n=5)) == {"a": 5, "b": 1}
    assert compile_value({"a": "$state.n", "b": True})(scope(n=5))["b"] is True


def test_equal_saves_share_their_targets_and_a_bad_target_is_still_refused() -> None:
    assert compile_save({"value": "state.x"}) is compile_save({"value": "state.x"})
    assert compile_save("state.x.k") is compile_save("state.x.k")
    assert compile_save({"value": "state.x"})[0].field == "x"
    for _ in range(2):  # a refusal is not remembered as a plan
        with pytest.raises(PathSyntaxError):
            compile_save({"value": "nope"})


def test_the_shared_tables_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long-lived processes (watch, the MCP server) plan workflow after workflow.
    monkeypatch.setattr(values, "_MAX_PATHS", 8)
    monkeypatch.setattr(plan_module, "_MAX_SAVES", 8)
    for i in range(40):
        assert compile_value({"value": f"$state.f{i}"})(scope(**{f"f{i}": i})) == {"value": i}
        assert compile_save(f"state.f{i}")[0].field == f"f{i}"
    assert len(values._PATHS) <= 8 and len(values._RESOLVERS) <= 8 and len(values._FLAT) <= 8
    assert len(plan_module._SAVES) <= 8


def test_a_chain_plans_each_step_with_its_own_routes() -> None:
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": "$state.v"}, "save": {"value": "state.v"},
              "on": {"ok": f"s{i + 1}" if i < 9 else "end"}} for i in range(10)]
    plan = compile_workflow({"name": "chain", "start": "s0", "state": {"v": {}}, "steps": steps})
    assert [plan.steps[f"s{i}"].routes["ok"] for i in range(10)] == [*(f"s{i}" for i in range(1, 10)), "end"]
    assert len({id(sp.with_) for sp in plan.steps.values()}) == 1
    first = plan.steps["s0"].step
    assert compile_step(first).routes is not compile_step(first).routes
