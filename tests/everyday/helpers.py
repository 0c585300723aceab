"""Shared helpers for the everyday-use tests: the repo's worked examples, wfops as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_FILES = ("sources.yaml", "workflows", "deployments", "examples")


def wfops(*args: str, cwd: Path, env: dict[str, str] | None = None,
          timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m wfops ARGS` as a real process, with the repo importable whatever the cwd.
    A GITHUB_STEP_SUMMARY of the outer CI is never inherited: only `env` may set it."""
    base = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "WFOPS_DB")}
    full_env = {**base, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "wfops", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def json_of(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.stdout.strip(), f"no stdout (exit {proc.returncode}); stderr: {proc.stderr}"
    return json.loads(proc.stdout)


def copy_examples(target: Path) -> Path:
    """The repo's own worked examples (python sources included), copied into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLE_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def cli(*args: str) -> int:
    """`wfops ARGS` in-process through the real error boundary; the exit code."""
    from wfops.cli.main import main

    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
