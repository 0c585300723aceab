"""Shared helpers for the everyday-use tests: the repo's worked examples."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_FILES = ("sources.yaml", "workflows", "deployments", "examples")


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
