from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.helpers import make_run_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled project per test module (compiling imports and validates every source)."""
    return make_run_project(tmp_path_factory.mktemp("proj"))
