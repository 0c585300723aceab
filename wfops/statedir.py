"""`.wfops/`: local state (the run store, caches), never committed.

wfops creates the directory on first use; a `.gitignore` of `*` inside it keeps it
out of git in any repository, not only in projects made by `wfops init` (as
`.pytest_cache/` and `.ruff_cache/` do for themselves).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from wfops.atomic import write_atomic
from wfops.errors import WfopsError

STATE_DIR = ".wfops"


def make_state_dir(directory: Path) -> None:
    """Create `directory` (and parents); when it is a `.wfops/`, make git ignore it."""
    directory.mkdir(parents=True, exist_ok=True)
    if directory.name != STATE_DIR:
        return
    ignore = directory / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(WfopsError):  # a read-only checkout: git may show it, nothing breaks
            write_atomic(ignore, "# wfops local state (run store, caches): never committed\n*\n", durable=False)
