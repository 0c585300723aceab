"""Start-up stays lean: importing the CLI loads none of the heavy libraries.

Fresh interpreters (slow): the point is what a new process imports.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import WFOPS, process_env

pytestmark = pytest.mark.slow

HEAVY = ("pydantic", "pydantic_core", "ruamel", "jsonschema", "sqlite3", "_sqlite3", "mcp", "watchfiles",
         "rich", "psycopg")

PROBE = """
import json, sys
import wfops.cli.main, wfops.cli.app
print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))
"""


def loaded_top_level_modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=process_env())
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_module() -> None:
    loaded = loaded_top_level_modules(PROBE)
    assert "wfops" in loaded and "typer" in loaded  # the probe really imported the CLI
    assert sorted(loaded & set(HEAVY)) == []


def test_the_entry_point_leaves_typer_for_later() -> None:
    # `wfops validate` (pre-commit, every commit) is dispatched before typer is imported.
    loaded = loaded_top_level_modules(PROBE.replace("import wfops.cli.main, wfops.cli.app", "import wfops.cli.main"))
    assert "wfops" in loaded and "typer" not in loaded


def test_the_probe_can_fail() -> None:
    # The same probe sees a heavy import when one happens, so the test above is not vacuous.
    loaded = loaded_top_level_modules(PROBE.replace("import wfops.cli.main", "import wfops.cli.main, sqlite3"))
    assert "sqlite3" in loaded


def test_python_m_wfops_help() -> None:
    done = subprocess.run([*WFOPS, "--help"], capture_output=True, text=True, timeout=60, env=process_env())
    assert done.returncode == 0, done.stderr
    assert "Usage: wfops" in done.stdout and "╭" not in done.stdout  # plain help, no rich boxes
    assert "Usage:" in done.stdout and "validate" in done.stdout and "schema" in done.stdout
    assert done.stderr == ""
