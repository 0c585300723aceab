"""A python node's call, with what it decides once per node rather than on every call: how its
returned model becomes its output (one dump where a second would give the same), and the
guards a fan-out holds around all its items' calls."""

from __future__ import annotations

import asyncio
import sys
import types
from typing import Any

import pytest

from wfops.errors import CapabilityError
from wfops.jsonvalues import plain_size_bound
from wfops.sources import contract
from wfops.sources import python as python_source
from wfops.sources.base import CallResult, Capability, StepContext
from wfops.sources.contract import ContractError, call_checked
from wfops.sources.python import PythonSource

NODES = '''
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer, field_serializer

import wfops


class In(BaseModel):
    n: int


class Out(BaseModel):
    doubled: int
    free: Any = None


class Shown(BaseModel):
    n: Annotated[int, PlainSerializer(lambda v: f"#{v}", when_used="json")]


class Rounded(BaseModel):
    x: float

    @field_serializer("x")
    def _x(self, value: float, info: Any) -> Any:
        return round(value) if info.mode == "json" else value


class Loud(BaseModel):
    n: int

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> "Loud":
        return super().model_validate({"n": obj["n"] + 100}, **kwargs)


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    n: int


@wfops.node
def opened(payload: In) -> Open:
    return Open(n=payload.n, more=payload.n + 1)


@wfops.node(outcomes=["found"])
def found_only(payload: In) -> Out:
    return Out(doubled=payload.n)


@wfops.node
def loud(payload: Loud) -> Shown:
    return Shown.model_construct(n=payload.n)


@wfops.node
async def twice(payload: In) -> Out:
    return Out(doubled=payload.n * 2, free=[1, {"k": "v"}] if payload.n else float("nan"))


@wfops.node
def shown(payload: In) -> Shown:
    return Shown(n=payload.n)


@wfops.node
def rounded(payload: In) -> Rounded:
    return Rounded(x=payload.n + 0.4)
'''


@pytest.fixture
def source(monkeypatch: pytest.MonkeyPatch) -> PythonSource:
    module = types.ModuleType("callnodes")
    monkeypatch.setitem(sys.modules, "callnodes", module)  # where pydantic resolves its annotations
    exec(compile(NODES, "callnodes.py", "exec"), module.__dict__)  # noqa: S102 - the test's own nodes
    return PythonSource("py", module)


def _call(source: PythonSource, name: str, payload: dict[str, Any]) -> Any:
    context = StepContext("r", "w", None, name, 1, f"r:{name}#1")
    return asyncio.run(source.call(name, payload, context)).output


@pytest.fixture
def dumps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls that took `model_output`'s two dumps, by the model's name."""
    seen: list[str] = []
    two = python_source.model_output

    def counted(ref: str, model: Any, python: Any = None) -> Any:
        seen.append(type(model).__name__)
        return two(ref, model, python)

    monkeypatch.setattr(python_source, "model_output", counted)
    return seen


def test_a_plain_python_dump_is_the_output_without_a_second_dump(source: PythonSource, dumps: list[str]) -> None:
    assert _call(source, "twice", {"n": 2}) == {"doubled": 4, "free": [1, {"k": "v"}]}
    assert dumps == []  # one dump: the python one was plain JSON


def test_a_nan_in_an_any_field_still_takes_both_dumps_and_is_refused(source: PythonSource,
                                                                    dumps: list[str]) -> None:
    with pytest.raises(ContractError, match=r"py\.twice output at free: nan is not a JSON number"):
        _call(source, "twice", {"n": 0})
    assert dumps == ["Out"]


@pytest.mark.parametrize(("node", "output"), [("shown", {"n": "#3"}), ("rounded", {"x": 3})])
def test_a_model_with_its_own_serializer_gets_its_json_dump(source: PythonSource, dumps: list[str], node: str,
                                                           output: Any) -> None:
    # The python dump ({"n": 3}, {"x": 3.4}) is plain JSON too, but not the output: a
    # serializer that may look at the mode decides, per model, that both dumps are taken.
    assert _call(source, node, {"n": 3}) == output
    assert len(dumps) == 1


def test_an_input_model_validates_with_its_own_model_validate_if_it_has_one(source: PythonSource) -> None:
    assert source._nodes["twice"][0].plain_validate  # pydantic's own: its validator, called directly
    assert not source._nodes["loud"][0].plain_validate
    assert _call(source, "loud", {"n": 1}) == {"n": "#101"}


@pytest.fixture
def general(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls that took the general path from a returned value to a result (`split_undeclared`)."""
    seen: list[str] = []
    split = python_source.split_undeclared

    def counted(output: Any, declared: Any, extra: Any) -> Any:
        seen.append(",".join(output))
        return split(output, declared, extra)

    monkeypatch.setattr(python_source, "split_undeclared", counted)
    return seen


def test_a_model_returned_bare_takes_the_short_path_and_any_other_the_general_one(
        source: PythonSource, general: list[str]) -> None:
    context = StepContext("r", "w", None, "s", 1, "r:s#1")
    result = asyncio.run(source.call("twice", {"n": 2}, context))
    assert (result.outcome, result.output, result.extra) == ("ok", {"doubled": 4, "free": [1, {"k": "v"}]}, None)
    assert general == []
    # Keys the model does not declare (an `extra="allow"` model) go to the extras, as before.
    result = asyncio.run(source.call("opened", {"n": 2}, context))
    assert (result.output, result.extra) == ({"n": 2}, {"more": 3})
    assert general == ["n,more"]
    # A node without an `ok` outcome may not return its model bare.
    with pytest.raises(CapabilityError, match="returned undeclared outcome 'ok'; declared: found"):
        asyncio.run(source.call("found_only", {"n": 2}, context))


def _sized(source: PythonSource, name: str, payload: dict[str, Any]) -> tuple[Any, int | None]:
    context = StepContext("r", "w", None, name, 1, f"r:{name}#1")
    result, bound = asyncio.run(source.call_sized(name, payload, context))
    return result.output, bound


def test_a_one_dump_output_comes_with_its_size_bound(source: PythonSource) -> None:
    output, bound = _sized(source, "twice", {"n": 2})
    assert bound == plain_size_bound(output)  # the walk that found it plain, not taken again
    # Two dumps (a serializer of its own): no bound, so the contract walks the output itself.
    assert _sized(source, "shown", {"n": 3}) == ({"n": "#3"}, None)


class _Told:
    """A source whose output is tiny but which tells a size bound over the limit."""

    id, kind = "py", "python"

    def __init__(self, bound: int) -> None:
        self.bound = bound

    async def call_sized(self, name: str, payload: dict[str, Any], context: StepContext) -> tuple[Any, int]:
        return CallResult("ok", {"n": 1}), self.bound


def test_the_contract_check_takes_the_bound_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    # The told bound is what the size check starts from: a bound over the limit makes the check
    # measure the output (which fits); a bound within it is not walked again at all.
    monkeypatch.setattr(contract, "_limit", 100)
    cap = Capability("py", "n", {"type": "object"}, {"type": "object"})
    context = StepContext("r", "w", None, "s", 1, "r:s#1")
    measured: list[Any] = []
    real = contract.json_size_over

    def counted(value: Any, limit: int) -> Any:
        measured.append(value)
        return real(value, limit)

    monkeypatch.setattr(contract, "json_size_over", counted)
    assert asyncio.run(call_checked(_Told(10**6), cap, {}, context)).output == {"n": 1}  # type: ignore[arg-type]
    assert measured == [{"n": 1}]
    walked: list[Any] = []
    monkeypatch.setattr(contract, "plain_size_bound", lambda value: walked.append(value))
    asyncio.run(call_checked(_Told(10), cap, {}, context))  # type: ignore[arg-type]
    assert walked == [] and measured == [{"n": 1}]
