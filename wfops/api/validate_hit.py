"""`validate` of a whole, unchanged project, answered from the cache alone.

pre-commit runs `wfops validate` on every commit, and most commits change no wfops
input. This route finds the project, computes the cache key and prints the report the
last validate rendered, loading no finding type, reporter or loader. Anything else (no
project, a miss, a format not kept rendered) answers None and the full path runs,
whose messages and exit codes are the only ones users see.
"""

from __future__ import annotations

from wfops.compiler.cachekey import REPLAYED, replay
from wfops.errors import WfopsError
from wfops.loader.root import find_root


def replay_project_report(project: str | None, fmt: str) -> tuple[str, bool] | None:
    """The whole project's report in `fmt` and whether it has no errors, or None."""
    if fmt not in REPLAYED:
        return None
    try:
        root = find_root(explicit=project) if project is not None else find_root()
    except (WfopsError, OSError):
        return None
    return replay(root, fmt)
