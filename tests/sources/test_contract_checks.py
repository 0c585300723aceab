"""The contract's checks of a call's result, decided once where they can be: the output size
limit is read from the environment when a run (or a lone call) starts, not on every call."""

from __future__ import annotations

import pytest

from wfops.errors import UsageError
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
