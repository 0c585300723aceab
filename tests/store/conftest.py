"""Backends the store contract suite runs against: a real SQLite file, a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from wfops.store import open_store

BACKENDS = ("postgres", "sqlite-file")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_location(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Path | str:
    """Where the store under test lives: a file path or a database URL."""
    if backend == "postgres":
        url: str = request.getfixturevalue("pg_url")  # a fresh database per test
        return url
    return tmp_path / ".wfops" / "wfops.db"


@pytest.fixture
def store_factory(store_location: Path | str) -> Iterator[Callable[[], object]]:
    """A callable opening a new connection to the same store each time it is called."""
    opened: list = []

    def make():
        store = open_store(store_location)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(store_factory):
    return store_factory()
