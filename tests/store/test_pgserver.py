"""The PostgreSQL test fixture's rule: without a server, skip locally but fail in CI."""

from __future__ import annotations

import pytest

from tests.pgserver import _absent


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception), ("1", pytest.fail.Exception),
                                             ("", pytest.skip.Exception), ("false", pytest.skip.Exception)])
def test_a_missing_server_fails_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome):
        _absent("no server here")
