"""The validate cache's key and its entry's replay, with nothing a cache hit does not need.

`wfops validate` runs on every commit (pre-commit) and most commits leave the wfops
files alone, so a hit must cost little more than starting Python: this module loads
neither `hashlib` (OpenSSL) nor `dataclasses` nor the loader. What the key covers, and
why, is told in `wfops.compiler.cache`, which builds and stores entries.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import wfops
from wfops.loader.testfiles import project_test_files
from wfops.statedir import state_link

try:
    # The same SHA-256 as hashlib's, from the C module that hashlib falls back to: hashlib
    # itself would load OpenSSL (~3 ms), about a fifth of a hit.
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.12+ calls it _sha2; a build may have neither
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha256

CACHE_FILE = Path(".wfops") / "cache" / "validate.json"
# 2: diagnostics carry their subject; 3: deployment files; 4: python inputs include failed and
# missing imports; 5: the whole project's report, rendered as text and JSON (`replay`)
FORMAT = 5
REPLAYED = ("text", "json")  # formats kept rendered; github/sarif depend on the checkout, not only the project


def input_files(root: Path) -> list[Path]:
    found = [root / name for name in ("sources.yaml", "wfops.lock") if (root / name).is_file()]
    for folder in ("workflows", "deployments"):
        directory = root / folder
        if directory.is_dir():
            found += sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        elif directory.is_file():
            found.append(directory)  # a finding of its own: removing it must miss the cache
    # `validate` checks test files too (tests/**/*.wftest.yaml)
    return found + [root / p.relative_to(root.resolve()) for p in project_test_files(root)]


def file_hash(path: Path) -> str | None:
    """sha256 of the file's content; None when it cannot be read (missing)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # The same digest; where hashlib is loaded already (a run), OpenSSL's is ~7x faster on
    # a long workflow's file than the C module's.
    loaded = sys.modules.get("hashlib")
    return str((sha256 if loaded is None else loaded.sha256)(data).hexdigest())


def tool_fingerprint() -> str:
    """This wfops (its code, an editable install's included, version and Python): changes
    whenever any of them does, so a result it recorded holds for it only."""
    return _tool_fingerprint()


def _tool_fingerprint() -> str:
    digest = sha256(f"{FORMAT}|{sys.version}|{getattr(wfops, '__version__', '')}".encode())
    package = Path(wfops.__file__).parent
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}|{stat.st_mtime_ns}|{stat.st_size}".encode())
    return str(digest.hexdigest())


def cache_key(root: Path) -> str:
    digest = sha256(_tool_fingerprint().encode())
    for path in input_files(root):
        # surrogateescape: a file name that is not UTF-8 must not crash the key (the loader reports it)
        digest.update(f"{path.relative_to(root).as_posix()}\0{file_hash(path)}\n".encode("utf-8", "surrogateescape"))
    return str(digest.hexdigest())


def place_hash(root: Path, rel: str) -> str | None:
    """`rel` as recorded: a file's content hash, or for a folder (`name/`) whether it exists."""
    if rel.endswith("/"):
        return "dir" if (root / rel).is_dir() else None
    return file_hash(root / rel)


def places_unchanged(root: Path, places: dict[str, str | None]) -> bool:
    """Every recorded place (`rel` -> its `place_hash` then) is as it was."""
    return all(place_hash(root, rel) == digest for rel, digest in places.items())


def current_entry(root: Path, key: str) -> dict[str, Any] | None:
    """The stored entry when it is for `key` and no python place it recorded changed; else None
    (a miss, or an unreadable cache, or one reached through a symlink, which may point anywhere)."""
    if state_link(root / CACHE_FILE) is not None:
        return None
    try:
        entry = json.loads((root / CACHE_FILE).read_text(encoding="utf-8"))
        if not isinstance(entry, dict) or entry.get("key") != key or not places_unchanged(root, entry["python"]):
            return None
        return entry
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def replay(root: Path, fmt: str) -> tuple[str, bool] | None:
    """The whole project's report in `fmt` (text or json) and whether it has no errors, as the
    last validate rendered it, when nothing it depends on changed since; None otherwise."""
    entry = current_entry(root, cache_key(root))
    if entry is None:
        return None
    try:
        rendered = entry["replay"][fmt]
        ok = entry["replay"]["ok"]
    except (KeyError, TypeError):
        return None
    return (rendered, ok) if isinstance(rendered, str) and isinstance(ok, bool) else None
