"""`wfops validate` and `wfops check` of a whole, unchanged project, answered from a record alone.

pre-commit runs `wfops validate` (and often `wfops check`) on every commit, and most commits
change no wfops input. This route finds the project, reads `.wfops/cache/validate.json`
(`check.json`) and, when its snapshot (`wfops.fastpath.snapshot`) still holds, prints the
report the last validate (check) rendered, loading no finding type, reporter, loader or
python source. Anything else (no project, a miss, a format not kept rendered, `check
--live`) answers None and the full path runs, whose messages and exit codes are the only
ones users see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError
from wfops.fastpath.snapshot import unchanged
from wfops.loader.root import find_root
from wfops.statedir import state_link

CACHE_FILE = Path(".wfops") / "cache" / "validate.json"
#: `wfops check` (without `--live`): the whole project against wfops.lock, rendered.
CHECK_FILE = Path(".wfops") / "cache" / "check.json"
REPLAYED = ("text", "json")  # formats kept rendered; github/sarif depend on the checkout, not only the project


def current_entry(root: Path, record: Path = CACHE_FILE) -> dict[str, Any] | None:
    """The stored entry when nothing its snapshot recorded changed; else None (a miss, an
    unreadable cache, or one reached through a symlink, which may point anywhere)."""
    if state_link(root / record) is not None:
        return None
    try:
        entry = json.loads((root / record).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and unchanged(root, entry.get("snapshot")) else None


def replay(root: Path, fmt: str, record: Path = CACHE_FILE) -> tuple[str, bool] | None:
    """The whole project's report in `fmt` (text or json) and whether it has no errors, as the
    last validate (the command `record` is kept for) rendered it, when nothing it depends on
    changed since; None otherwise."""
    entry = current_entry(root, record)
    if entry is None:
        return None
    try:
        rendered = entry["replay"][fmt]
        ok = entry["replay"]["ok"]
    except (KeyError, TypeError):
        return None
    return (rendered, ok) if isinstance(rendered, str) and isinstance(ok, bool) else None


def replay_project_report(project: str | None, fmt: str, record: Path = CACHE_FILE) -> tuple[str, bool] | None:
    """The whole project's report in `fmt` and whether it has no errors, or None."""
    if fmt not in REPLAYED:
        return None
    try:
        root = find_root(explicit=project) if project is not None else find_root()
    except (WfopsError, OSError):
        return None
    return replay(root, fmt, record)
