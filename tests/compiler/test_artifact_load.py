"""A stored normalized form is built from the declaration, not validated again (the gate passed it
and its hash addresses it): the fast path planning a long workflow from its record takes."""

from __future__ import annotations

from typing import Any

from wfops.compiler.artifact import load_artifact, normalize_workflow
from wfops.engine.plan import compile_workflow
from wfops.model.objects import CallStep, Workflow
from wfops.model.plain import built, validated


def chain(n: int) -> dict[str, Any]:
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": "$state.x"}, "save": "state.x",
              "next": f"s{i + 1}" if i < n - 1 else "end"} for i in range(n)]
    return {"name": "chain", "version": 1, "state": {"x": {"type": "string", "default": "a"}}, "steps": steps}


def test_a_stored_form_is_built_without_checking_its_values_again() -> None:
    form = normalize_workflow(validated("workflow", chain(3)))
    form["steps"][0]["id"] = "not an id!"  # the checked path would refuse this pattern
    loaded = load_artifact(form)
    assert isinstance(loaded, Workflow) and loaded.steps[0].id == "not an id!"


def test_the_build_fills_the_declared_defaults_a_stored_form_lacks() -> None:
    form = normalize_workflow(validated("workflow", chain(2)))
    assert "timeout" not in form["steps"][0] and "retry" not in form["steps"][0]
    step = built("workflow", form).steps[0]  # type: ignore[union-attr]
    assert isinstance(step, CallStep) and step.timeout is None and step.retry is None
    assert compile_workflow(form).steps["s0"].retry is None  # no retry of its own: its capability's default, or one attempt


def test_a_form_that_does_not_fit_the_declaration_is_validated() -> None:
    form = normalize_workflow(validated("workflow", chain(2)))
    del form["steps"][0]["id"]  # required: nothing to build
    assert built("workflow", form) is None


def test_built_and_checked_loads_agree_on_a_valid_form() -> None:
    form = normalize_workflow(validated("workflow", chain(4)))
    assert normalize_workflow(built("workflow", form)) == normalize_workflow(validated("workflow", form))  # type: ignore[arg-type]
