"""A state field whose schema is a bare `type` takes a value of that exact type without the
validator; everything else still meets the validator, so the outcome is the same."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.helpers import make_engine, run
from wfops.engine.plan import compile_workflow
from wfops.runner.progress import ProgressSink


def _wf(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "w", "input": {"type": "object"}, "state": {"x": schema}, "output": {"x": "$state.x"},
            "steps": [{"id": "s", "uses": "std.echo", "with": {"value": "$input.v"}, "save": {"value": "state.x"},
                       "next": "end"}]}


@pytest.mark.parametrize(("schema", "value", "ok"), [
    ({"type": "integer"}, 3, True),
    ({"type": "integer"}, True, False),  # a bool is not a JSON integer
    ({"type": "integer"}, 3.0, True),  # an integral number is (the validator's call)
    ({"type": "integer"}, 3.5, False),
    ({"type": "integer", "description": "n"}, "3", False),
    ({"type": "number"}, 2.5, True),
    ({"type": "string"}, 1, False),
    ({"type": "string", "minLength": 2}, "a", False),  # not a bare type: the validator decides
    ({"type": "object"}, [], False),
    ({"type": "array"}, [1], True),
])
def test_a_write_to_a_typed_field_passes_exactly_when_the_validator_passes_it(schema: dict[str, Any], value: Any,
                                                                               ok: bool) -> None:
    engine, _source, _sink = make_engine([_wf(schema)])
    snapshot = run(engine.start("w", {"v": value}))
    assert snapshot.status == ("completed" if ok else "failed"), snapshot.error
    if not ok:
        assert snapshot.error is not None and snapshot.error["type"] == "SaveError"


def test_only_a_bare_type_is_planned_for_the_quick_check() -> None:
    plan = compile_workflow(_wf({"type": "integer", "title": "n"}))
    assert plan.state_types == {"x": (int,)}
    assert compile_workflow(_wf({"type": "integer", "minimum": 0})).state_types == {}
    assert compile_workflow(_wf({"type": ["integer", "null"]})).state_types == {}


def test_a_progress_sink_offers_a_notice_only_when_its_on_step_takes_one() -> None:
    seen: list[tuple[Any, ...]] = []

    class Shown:
        def __call__(self, entry: Any) -> None:
            return None

        def step_started(self, *notice: Any) -> None:
            seen.append(notice)

    assert ProgressSink(store=None, on_step=lambda entry: None).step_started is None  # type: ignore[arg-type]
    assert ProgressSink(store=None).step_started is None  # type: ignore[arg-type]
    notice = ProgressSink(store=None, on_step=Shown()).step_started  # type: ignore[arg-type]
    assert notice is not None
    notice("a", "call", None, 0)
    assert seen == [("a", "call", None, 0)]
