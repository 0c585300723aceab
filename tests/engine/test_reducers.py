from __future__ import annotations

import pytest

from wfops.engine.reducers import ABSENT, REDUCERS, ReducerError, apply_write

from .helpers import make_engine, run


@pytest.mark.parametrize(("reducer", "writes", "expected"), [
    ("replace", [1, 2], 2),
    ("append", [[1], 2], [[1], 2]),
    ("extend", [[1, 2], [3], 4], [1, 2, 3, 4]),
    ("union", [[1, 2], [2, 3], 1, {"a": 1}, {"a": 1}], [1, 2, 3, {"a": 1}]),
    ("merge", [{"a": 1, "b": 1}, {"b": 2}], {"a": 1, "b": 2}),
    ("add", [1, 2.5, 3], 6.5),
    ("min", [3, 1, 2], 1),
    ("max", [3, 5, 2], 5),
])
def test_reducers_through_a_workflow(reducer: str, writes: list, expected: object) -> None:
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": w}, "save": {"value": "state.f"},
              "next": f"s{i + 1}" if i + 1 < len(writes) else "end"} for i, w in enumerate(writes)]
    wf = {"name": "r", "state": {"f": {"reducer": reducer}}, "output": {"f": "$state.f"}, "steps": steps}
    engine, _, sink = make_engine([wf])
    snap = run(engine.start("r", {}))
    assert snap.output == {"f": expected}
    # state_changes hold the writes, not the reduced result
    assert [e.state_changes[0]["value"] for e in sink.trace] == writes


def test_union_treats_a_non_list_as_one_item_and_true_is_not_one() -> None:
    assert REDUCERS["union"](ABSENT, 1) == [1]
    assert REDUCERS["union"]([1], True) == [1, True]


def test_reducers_never_mutate_what_they_were_given() -> None:
    old = [1]
    assert REDUCERS["append"](old, 2) == [1, 2] and old == [1]
    merged = {"a": 1}
    REDUCERS["merge"](merged, {"b": 2})
    assert merged == {"a": 1}


def test_bad_reducer_input_fails_the_step_with_a_save_error_and_writes_nothing() -> None:
    wf = {"name": "bad", "state": {"n": {"reducer": "add"}, "m": {}},
          "output": {"n": "$state.n", "m": "$state.m"},
          "steps": [{"id": "a", "uses": "t.two", "save": {"m": "state.m", "n": "state.n"}, "next": "end"}]}
    engine, source, sink = make_engine([wf])
    source.add("two", lambda p, c: {"m": 1, "n": "not a number"})
    snap = run(engine.start("bad", {}))
    assert snap.status == "failed" and snap.error["type"] == "SaveError" and snap.error["step"] == "a"
    assert sink.trace[0].state_changes == []  # all writes of a step, or none


def test_apply_write_refuses_keys_under_a_non_object() -> None:
    state = {"f": [1]}
    with pytest.raises(ReducerError):
        apply_write(state, {}, "f", ("k",), 1)
