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
A hit replays the diagnostics without importing pydantic, ruamel or user code.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import wfops
from wfops.atomic import write_atomic
from wfops.diagnostics import Diagnostic
from wfops.errors import WfopsError
from wfops.loader.wftests import find_test_files
from wfops.sources.modules import consulted_files

CACHE_FILE = Path(".wfops") / "cache" / "validate.json"
FORMAT = 4  # 2: diagnostics carry their subject; 3: deployment files; 4: python inputs include failed and missing imports


def input_files(root: Path) -> list[Path]:
    found = [root / name for name in ("sources.yaml", "wfops.lock") if (root / name).is_file()]
    for folder in ("workflows", "deployments"):
        directory = root / folder
        if directory.is_dir():
            found += sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        elif directory.is_file():
            found.append(directory)  # a finding of its own: removing it must miss the cache
    # `validate` checks test files too (tests/**/*.wftest.yaml)
    return found + [root / p.relative_to(root.resolve()) for p in find_test_files(root)]


def _file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _tool_fingerprint() -> str:
    """Changes whenever the wfops code (an editable install included) or Python changes."""
    digest = hashlib.sha256(f"{FORMAT}|{sys.version}|{getattr(wfops, '__version__', '')}".encode())
    package = Path(wfops.__file__).parent
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}|{stat.st_mtime_ns}|{stat.st_size}".encode())
    return digest.hexdigest()


def tool_fingerprint() -> str:
    """This wfops (its code, version and Python): a result it recorded holds for it only."""
    return _tool_fingerprint()


def file_hash(path: Path) -> str | None:
    """sha256 of the file's content; None when it cannot be read (missing)."""
    return _file_hash(path)


def cache_key(root: Path) -> str:
    digest = hashlib.sha256(_tool_fingerprint().encode())
    for path in input_files(root):
        # surrogateescape: a file name that is not UTF-8 must not crash the key (the loader reports it)
        digest.update(f"{path.relative_to(root).as_posix()}\0{_file_hash(path)}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def lookup(root: Path, key: str) -> tuple[list[Diagnostic], dict[str, str]] | None:
    """The cached diagnostics for `key` and the deployment file -> name table, or None on any
    miss (or an unreadable cache)."""
    try:
        entry = json.loads((root / CACHE_FILE).read_text(encoding="utf-8"))
        if entry.get("key") != key:
            return None
        for rel, digest in entry["python"].items():
            if _place_hash(root, rel) != digest:
                return None
        names = {str(file): str(name) for file, name in entry["deployments"].items()}
        return [Diagnostic(**d) for d in entry["diagnostics"]], names
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _place_hash(root: Path, rel: str) -> str | None:
    """`rel` as recorded: a file's content hash, or for a folder (`name/`) whether it exists."""
    if rel.endswith("/"):
        return "dir" if (root / rel).is_dir() else None
    return _file_hash(root / rel)


def python_inputs(root: Path) -> dict[str, str | None]:
    """Every place under `root` whose content decided what importing the python sources gave:
    modules loaded now, and every place an import looked (found or not), with their hashes."""
    places = set(imported_project_files(root)) | consulted_files(root)
    return {rel: _place_hash(root, rel) for rel in sorted(places)}


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


def store(root: Path, key: str, diagnostics: list[Diagnostic], deployments: dict[str, str]) -> None:
    """Best effort: a read-only checkout simply runs uncached."""
    # deferred: wfops.statedir is not needed on the validate cache-hit path (pre-commit)
    from wfops.statedir import make_state_dir

    entry: dict[str, Any] = {
        "key": key,
        "python": python_inputs(root),
        "diagnostics": [d.to_dict(subject=True) for d in diagnostics],
        "deployments": deployments,
    }
    target = root / CACHE_FILE
    try:
        make_state_dir(root / CACHE_FILE.parts[0])
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps(entry), durable=False)
    except (OSError, WfopsError):
        pass
