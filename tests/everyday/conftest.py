"""One compiled copy of the repo's worked examples, shared by the tests that run them
(compiling starts the example MCP server once, not once per module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.everyday.helpers import copy_examples
from tests.harness import run_cli


@pytest.fixture(scope="session")
def examples_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_examples(tmp_path_factory.mktemp("examples"))
    compiled = run_cli("compile", cwd=root)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return root
