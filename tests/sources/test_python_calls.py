"""A python node's call, with what it decides once per node rather than on every call: how its
returned model becomes its output (one dump where a second would give the same), and the
guards a fan-out holds around all its items' calls."""

from __future__ import annotations

import asyncio
import sys
import types
from typing import Any

import pytest

from wfops.sources import python as python_source
from wfops.sources.base import StepContext
from wfops.sources.contract import ContractError
from wfops.sources.python import PythonSource

NODES = '''
from typing import Annotated, Any

from pydantic import BaseModel, PlainSerializer, field_serializer

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
