"""Packaging metadata: an SPDX license with its file, and dependency floors that work
(CI installs exactly the floors, `.ci/floors.py`, and runs the fast lane on them)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.harness import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_license_is_an_spdx_expression_with_its_file() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


def test_floors_are_the_versions_that_work_and_ci_tests_them() -> None:
    floors = subprocess.run([sys.executable, str(REPO / ".ci/floors.py")], capture_output=True, text=True,
                            check=True).stdout.split()
    assert len(floors) == len(PROJECT["dependencies"])
    # Older typer lacks `typer._click` (every command crashed before 0.26), and the value names
    # the help replaces and the completion protocol (before 0.29.2); mcp 2.3 requires pydantic 2.12.
    assert {"typer==0.29.2", "pydantic==2.12", "mcp==2.3"} <= set(floors)
    ci = (REPO / ".ci/run").read_text(encoding="utf-8")
    assert 'python3 .ci/floors.py > "$floors/constraints.txt"' in ci
    assert '--constraint "$floors/constraints.txt" -e \'.[postgres,dask]\' \\\n  $same_pytest hypothesis mcp-server-time' in ci
    assert '-m "not slow"' in ci
