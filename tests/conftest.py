"""Shared fixtures: real temp project directories, real files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.pgserver import pg_cluster, pg_url  # noqa: F401 - fixtures for every test module
from wfops.redact import forget

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_declared_secrets():
    """Each test starts with no secret declared to the process's redactor, as a new `wfops`
    process does (a test's secrets would otherwise mask text in later tests)."""
    forget()
    yield
    forget()


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def make_project(tmp_path: Path):
    """make_project({"sources.yaml": ..., "workflows/a.yaml": ...}) -> project root."""

    def make(files: dict[str, str]) -> Path:
        files = {"sources.yaml": "sources: {}\n", **files}
        return write(tmp_path, files)

    return make
