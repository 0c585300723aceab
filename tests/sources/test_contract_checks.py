"""The contract's checks of a call's result, decided once where they can be: the output size
limit is read from the environment when a run (or a lone call) starts, not on every call;
plain JSON well under the limit is told in one walk, and anything else gets the full checks."""

from __future__ import annotations

import pytest

from wfops.errors import UsageError
from wfops.jsonvalues import MAX_DEPTH, json_problem, json_size, plain_size_bound
from wfops.sources import contract
from wfops.sources.base import Capability
from wfops.sources.contract import MAX_OUTPUT_ENV, ContractError, check_result, max_output_bytes

CAP = Capability("py", "blob", {"type": "object"}, {"type": "object"})
OUTPUT = {"text": "x" * 2000}


@pytest.fixture(autouse=True)
def _fresh_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract, "_limit", None)


def test_the_limit_is_read_when_asked_for_not_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_OUTPUT_ENV, "1000")
    assert max_output_bytes() == 1000  # what a run does before it starts
    with pytest.raises(ContractError, match="over the limit of 1,000 bytes"):
        check_result(CAP, "ok", OUTPUT)
    # Changed in the middle of a run: the calls keep the limit the run started with.
    monkeypatch.setenv(MAX_OUTPUT_ENV, "not a number")
    with pytest.raises(ContractError, match="over the limit of 1,000 bytes"):
        check_result(CAP, "ok", OUTPUT)
    monkeypatch.setenv(MAX_OUTPUT_ENV, "100000")
    assert max_output_bytes() == 100000  # the next run reads it again
    check_result(CAP, "ok", OUTPUT)


def test_a_check_before_any_run_reads_the_limit_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_OUTPUT_ENV, "1000")
    with pytest.raises(ContractError, match="over the limit of 1,000 bytes"):
        check_result(CAP, "ok", OUTPUT)
    monkeypatch.setenv(MAX_OUTPUT_ENV, "0")
    with pytest.raises(UsageError, match="is not a positive whole number of bytes"):
        max_output_bytes()
    monkeypatch.delenv(MAX_OUTPUT_ENV)
    assert max_output_bytes() == contract.DEFAULT_MAX_OUTPUT


VALUES = [{}, [], "", "é\u2028\x1f" * 50, 0, -1, 2**64, -(10**300), 1.5, -1.2345678901234567e-308, True, None,
          {"a": [1, {"b": ["x", None, False]}], "ü": {"\x00": 3.25}}, [[[[]]]]]


@pytest.mark.parametrize("value", VALUES)
def test_the_one_walk_bounds_the_size_from_above(value: object) -> None:
    bound = plain_size_bound(value)
    assert bound is not None and bound >= json_size(value)


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_the_one_walk_refuses_the_nesting_the_full_check_refuses(levels: int, kind: str) -> None:
    value: object = 1
    for _ in range(levels):
        value = [value] if kind == "list" else {"a": value}
    assert (plain_size_bound(value) is None) == (json_problem(value, "x") is not None)
    assert (plain_size_bound(value) is None) == (levels > MAX_DEPTH)


@pytest.mark.parametrize(("output", "message"), [
    ({"n": float("nan")}, "py.blob output at n: nan is not a JSON number"),
    ({"t": (1, 2), "s": "\ud800"}, "py.blob output at s: the text is not valid Unicode (it holds a lone surrogate)"),
    ({"n": 10 ** 4001}, "py.blob output at n: an integer of more than 4000 digits is too long"),
    ({1: "x"}, "py.blob output: a key is an integer, not a string"),
])
def test_what_is_not_plain_json_gets_the_full_checks_words(output: object, message: str) -> None:
    assert plain_size_bound(output) is None
    with pytest.raises(ContractError) as caught:
        check_result(CAP, "ok", output)
    assert str(caught.value) == f"{message}; a capability's output must be plain JSON"


def test_an_output_whose_bound_is_over_the_limit_is_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_OUTPUT_ENV, "1000")
    max_output_bytes()
    fits = {"text": "x" * 900}  # bound 5,4xx bytes, 911 bytes of JSON
    assert plain_size_bound(fits) > 1000  # type: ignore[operator]
    check_result(CAP, "ok", fits)
    with pytest.raises(ContractError, match="output is 1,011 bytes of JSON, over the limit of 1,000 bytes"):
        check_result(CAP, "ok", {"text": "x" * 1000})
