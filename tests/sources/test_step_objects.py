"""The per-step objects built without their `__init__` (`step_context`, `ok_result`) are the
objects `__init__` builds: equal, still frozen, each with its own `extra`; and std's calls
answer as before, its table built once."""

from __future__ import annotations

import asyncio

import pytest

from wfops.errors import CapabilityError
from wfops.sources.base import CallResult, StepContext, ok_result, step_context
from wfops.sources.std import StdSource


def test_step_context_is_the_declared_object() -> None:
    made = step_context("r", "wf", None, "s", 2, "r:s#1")
    declared = StepContext("r", "wf", None, "s", 2, "r:s#1")
    assert type(made) is StepContext and made == declared
    assert made.as_dict() == declared.as_dict() and repr(made) == repr(declared)
    assert made.replace(attempt=3) == StepContext("r", "wf", None, "s", 3, "r:s#1")
    with pytest.raises(AttributeError, match="immutable"):
        made.attempt = 5  # type: ignore[misc]
    assert step_context("r", "wf", None, "s", 2, "k").extra is not step_context("r", "wf", None, "s", 2, "k").extra


def test_ok_result_is_the_declared_object() -> None:
    made = ok_result({"value": 1})
    assert type(made) is CallResult and made == CallResult("ok", {"value": 1}) and made.extra is None
    with pytest.raises(AttributeError, match="immutable"):
        made.outcome = "no"  # type: ignore[misc]


def test_std_calls_answer_as_before() -> None:
    std = StdSource()
    ctx = step_context("r", "wf", None, "s", 1, "k")
    assert std.capabilities() is std.capabilities()  # one table, not rebuilt per look-up
    assert set(std.capabilities()) == {"echo", "fail", "format", "sleep"}
    assert asyncio.run(std.call("echo", {"value": [1]}, ctx)) == CallResult("ok", {"value": [1]})
    assert asyncio.run(std.call("format", {"template": "{a}!", "values": {"a": "hi"}}, ctx)).output == {"text": "hi!"}
    assert asyncio.run(std.call("sleep", {"seconds": 0}, ctx)) == CallResult("ok", {})
    with pytest.raises(CapabilityError, match="boom"):
        asyncio.run(std.call("fail", {"message": "boom"}, ctx))
    with pytest.raises(CapabilityError, match="no capability 'nope'"):
        asyncio.run(std.call("nope", {}, ctx))
