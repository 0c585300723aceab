"""A content-addressed cache of `wfops validate` results under `.wfops/cache/`.

`wfops validate` runs on every commit, and most commits leave the wfops files
alone. The key is the sha256 of every input: the wfops files (sources.yaml,
workflows/, deployments/, wfops.lock, by content and by name so added and
removed files count), the wfops code itself and the Python version. The entry
also records every place under the project where importing the python sources
looked for a module, with its hash: the files that were imported (python sources
and whatever they import from the project), the ones that failed to import, and
the ones that did not exist yet (hash null). Any of them edited, created or
removed misses too, so a fixed import error is never replayed.
A hit replays the diagnostics without importing pydantic, ruamel or user code; the
whole project's report, kept rendered, is replayed by `cachekey` alone (pre-commit).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from wfops.atomic import write_atomic
from wfops.compiler.cachekey import (
    CACHE_FILE,
    FORMAT,
    REPLAYED,
    cache_key,
    current_entry,
    file_hash,
    input_files,
    place_hash,
    places_unchanged,
    tool_fingerprint,
)
from wfops.diagnostics import Diagnostic
from wfops.errors import WfopsError
from wfops.sources.modules import consulted_files
from wfops.statedir import make_state_dir

# The key and the hit's replay live in `cachekey`, which a hit loads alone.
__all__ = ["CACHE_FILE", "FORMAT", "REPLAYED", "cache_key", "file_hash", "imported_project_files", "input_files", "lookup",
           "places_unchanged", "python_inputs", "store", "tool_fingerprint"]


def lookup(root: Path, key: str) -> tuple[list[Diagnostic], dict[str, str]] | None:
    """The cached diagnostics for `key` and the deployment file -> name table, or None on any
    miss (or an unreadable cache)."""
    entry = current_entry(root, key)
    if entry is None:
        return None
    try:
        names = {str(file): str(name) for file, name in entry["deployments"].items()}
        return [Diagnostic(**d) for d in entry["diagnostics"]], names
    except (KeyError, ValueError, TypeError, AttributeError):
        return None


def python_inputs(root: Path) -> dict[str, str | None]:
    """Every place under `root` whose content decided what importing the python sources gave:
    modules loaded now, and every place an import looked (found or not), with their hashes."""
    places = set(imported_project_files(root)) | consulted_files(root)
    return {rel: place_hash(root, rel) for rel in sorted(places)}


def imported_project_files(root: Path) -> list[str]:
    """Project Python files that are loaded now (after validation imported the python sources)."""
    root = root.resolve()
    prefixes = tuple({str(root) + os.sep, str(Path(os.path.abspath(root))) + os.sep})
    found = set()
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        # A cheap prefix test first: resolving every loaded module's path costs ~15 ms.
        if not origin or "site-packages" in origin or not origin.startswith(prefixes):
            continue
        path = Path(origin).resolve()
        if path.is_relative_to(root):
            found.add(path.relative_to(root).as_posix())
    return sorted(found)


def store(root: Path, key: str, diagnostics: list[Diagnostic], deployments: dict[str, str], *,
          replay: dict[str, Any] | None = None) -> None:
    """Best effort: a read-only checkout simply runs uncached. `replay`: the whole project's
    report as `validate` printed it, by format, and `ok` (see `cachekey.replay`)."""
    entry: dict[str, Any] = {
        "key": key,
        "python": python_inputs(root),
        "diagnostics": [d.to_dict(subject=True) for d in diagnostics],
        "deployments": deployments,
    }
    if replay is not None:
        entry["replay"] = replay
    target = root / CACHE_FILE
    try:
        make_state_dir(target.parent)  # refuses a symlink on the way: the cache is then skipped
        write_atomic(target, json.dumps(entry), durable=False)
    except (OSError, WfopsError):
        pass
