"""Backends the store contract suite runs against (today: a real SQLite file)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from wfops.store import open_store


def _sqlite(tmp_path: Path) -> Callable[[], object]:
    return lambda: open_store(tmp_path / ".wfops" / "wfops.db")


BACKENDS = {"sqlite-file": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], object]]:
    """A callable opening a new connection to the same store each time it is called."""
    opened: list = []

    def make():
        store = BACKENDS[request.param](tmp_path)()
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(store_factory):
    return store_factory()
