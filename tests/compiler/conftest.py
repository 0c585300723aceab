"""Fixtures for the static checks: a real temp project with a python source and an MCP entry."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write

FIXTURE = Path(__file__).parent / "fixture"
CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def project(tmp_path: Path) -> Iterator:
    """project({"workflows/x.yaml": ...}) -> root holding the fixture sources plus these files."""
    from wfops.sources.python import forget_project_modules

    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)

    def make(files: dict[str, str] | None = None) -> Path:
        return write(root, files or {})

    yield make
    forget_project_modules(root)  # every test's `nodes` module is its own


def codes(diagnostics) -> list[tuple[str, int, int]]:
    return sorted((d.code, d.line, d.column) for d in diagnostics)
