"""The regex limit of a schema check: one budget of CPU time (PATTERN_SECONDS) for every
match of one check of one value, handed to the `regex` module's own timeout (which counts
CPU time). Asserted through the timeouts the real `regex.search` is given and the
verdicts, never through elapsed time."""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any

import pytest
import regex

from wfops.schemacheck import PATTERN_SECONDS, first_error

EVIL = "^(a|a)*$"  # backtracks exponentially on "aaaa…!": each `a` more doubles the work
REFUSED = (f"$: the pattern '{EVIL}' took longer than 1 s to match the value; use a pattern that does "
           "not backtrack (no nested repeats such as (a+)+)")


@pytest.fixture
def timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The `timeout` given to each `regex.search` call; the real search still runs."""
    seen: list[float | None] = []
    real = regex.search

    def search(pattern: str, text: str, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        seen.append(timeout)
        return real(pattern, text, *args, timeout=timeout, **kwargs)

    monkeypatch.setattr(regex, "search", search)
    return seen


def _costly_text() -> tuple[str, float]:
    """A text EVIL fails to match after a few hundredths of a second of CPU, on this machine."""
    for length in range(12, 40):
        text = "a" * length + "!"
        started = time.process_time()
        assert regex.search(EVIL, text) is None
        cost = time.process_time() - started
        if cost >= 0.03:
            return text, cost
    raise AssertionError("no text made the pattern backtrack")


def test_the_matches_of_one_check_share_one_budget(timeouts: list[float | None]) -> None:
    text, cost = _costly_text()
    assert cost < PATTERN_SECONDS / 4
    # Each match alone stays far inside the limit; together they need three times the budget.
    values = [text] * (int(3 * PATTERN_SECONDS / cost) + 2)
    schema = {"type": "array", "items": {"type": "string", "pattern": EVIL}}
    timeouts.clear()

    assert first_error(schema, values) == REFUSED  # not "... does not match": the budget ran out
    assert timeouts[0] == PATTERN_SECONDS  # the first match may take all of it
    assert all(b is not None and a is not None and b < a for a, b in pairwise(timeouts)), timeouts  # what is left
    assert len(timeouts) < len(values)  # stopped before matching every item

    # The next check has a budget of its own.
    timeouts.clear()
    assert first_error({"type": "string", "pattern": "^a+$"}, "a!") == '$: "a!" does not match "^a+$"'
    assert timeouts and timeouts[0] == PATTERN_SECONDS
