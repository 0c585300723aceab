from __future__ import annotations

import pytest

from wfops.engine.values import Scope, compile_condition, compile_value

STATE = {"n": 3, "s": "b", "list": [1, 2, "x"], "flag": True, "nothing": None, "obj": {"k": [10, 20]}}


def check(cond: dict) -> bool:
    return compile_condition(cond)(Scope({"i": 1}, STATE, None, {"TOKEN": "t"}))


@pytest.mark.parametrize(("cond", "expected"), [
    ({"eq": ["$state.n", 3]}, True),
    ({"eq": ["$state.flag", 1]}, False),  # JSON equality: true is not 1
    ({"ne": ["$state.s", "a"]}, True),
    ({"gt": ["$state.n", 2]}, True),
    ({"ge": ["$state.n", 3]}, True),
    ({"lt": ["$state.s", "c"]}, True),
    ({"le": ["$state.n", 2]}, False),
    ({"gt": ["$state.s", 1]}, False),  # mismatched types: false, not a crash
    ({"lt": ["$state.nothing", 1]}, False),
    ({"gt": ["$state.flag", 0]}, False),
    ({"in": [2, "$state.list"]}, True),
    ({"in": ["x", "$state.list"]}, True),
    ({"in": ["b", "$state.s"]}, False),  # `in` on a non-list is false
    ({"exists": "$state.n"}, True),
    ({"exists": "$state.nothing"}, False),
    ({"exists": "$state.missing.deep"}, False),
    ({"eq": ["$state.obj.k.1", 20]}, True),
    ({"eq": ["$input.i", 1]}, True),
    ({"and": [{"eq": [1, 1]}, {"not": {"eq": [1, 2]}}]}, True),
    ({"or": [{"eq": [1, 2]}, {"in": [9, [8, 9]]}]}, True),
    ({"not": {"exists": "$state.n"}}, False),
    ({"eq": ["$$state.n", "$state.n"]}, False),
    ({"eq": ["$$state.n", "$$state.n"]}, True),
])
def test_operators(cond: dict, expected: bool) -> None:
    assert check(cond) is expected


def test_values_resolve_paths_at_any_depth_and_missing_paths_are_null() -> None:
    getter = compile_value({"a": ["$state.n", {"b": "$state.obj.k.0"}], "m": "$state.obj.k.9",
                            "s": "$secret.TOKEN", "esc": "$$secret", "lit": 1})
    value = getter(Scope({}, STATE, None, {"TOKEN": "t"}))
    assert value == {"a": [3, {"b": 10}], "m": None, "s": "t", "esc": "$secret", "lit": 1}
