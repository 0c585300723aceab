"""The `wfops validate` cache (`.wfops/cache/validate.json`): the whole project's findings and
their rendered report, with the snapshot they were computed from (`wfops.fastpath.snapshot`).

A hit returns the findings without importing pydantic, ruamel or user code; the pre-commit
hit replays the rendered report without even building a finding (`wfops.fastpath.replay`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wfops.atomic import write_atomic
from wfops.diagnostics import Diagnostic
from wfops.errors import WfopsError
from wfops.fastpath.replay import CACHE_FILE, CHECK_FILE, current_entry
from wfops.fastpath.snapshot import build
from wfops.statedir import make_state_dir


def lookup(root: Path) -> tuple[list[Diagnostic], dict[str, str]] | None:
    """The cached diagnostics and the deployment file -> name table, or None on any miss (or an
    unreadable cache)."""
    entry = current_entry(root)
    if entry is None:
        return None
    try:
        names = {str(file): str(name) for file, name in entry["deployments"].items()}
        return [Diagnostic(**d) for d in entry["diagnostics"]], names
    except (KeyError, ValueError, TypeError, AttributeError):
        return None


def store(root: Path, files: dict[str, str | None], diagnostics: list[Diagnostic], deployments: dict[str, str], *,
          replay: dict[str, Any] | None = None) -> None:
    """Best effort: a read-only checkout simply runs uncached. `files`: `snapshot.project_files`
    taken before validation read them. `replay`: the whole project's report as `validate`
    printed it, by format, and `ok` (see `replay.replay`)."""
    entry: dict[str, Any] = {
        "snapshot": build(root, files, names=list(files)),
        "diagnostics": [d.to_dict(subject=True) for d in diagnostics],
        "deployments": deployments,
    }
    if replay is not None:
        entry["replay"] = replay
    _write(root / CACHE_FILE, entry)


def store_check(root: Path, files: dict[str, str | None], replay: dict[str, Any]) -> None:
    """The record of `wfops check` (`replay.CHECK_FILE`), best effort as `store`: its report by
    format and `ok`, keyed by the snapshot of every wfops file (`files`, taken before the
    check read them) and the python the check imported."""
    _write(root / CHECK_FILE, {"snapshot": build(root, files, names=list(files)), "replay": replay})


def _write(target: Path, entry: dict[str, Any]) -> None:
    try:
        make_state_dir(target.parent)  # refuses a symlink on the way: the cache is then skipped
        write_atomic(target, json.dumps(entry), durable=False)
    except (OSError, WfopsError):
        pass
