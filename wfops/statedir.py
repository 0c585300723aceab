"""`.wfops/`: local state (the run store, caches, run locks), never committed, always inside the project.

wfops creates the directory on first use; a `.gitignore` of `*` inside it keeps it
out of git in any repository, not only in projects made by `wfops init` (as
`.pytest_cache/` and `.ruff_cache/` do for themselves).

A `.wfops` that is a symlink, or a symlink anywhere under it (committed by a pull
request, say), would have wfops create its store, caches and locks wherever the link
points. wfops never goes through one: a run refuses (`refuse_linked_state`, a
`StoreError`), and the caches, which are best effort, are neither read nor written
(`state_link`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from wfops.errors import StoreError, WfopsError

STATE_DIR = ".wfops"


def _state_top(path: Path) -> int | None:
    """How many leading components of `path` end at its (last) `.wfops` one; None without one."""
    parts = path.parts
    return len(parts) - parts[::-1].index(STATE_DIR) if STATE_DIR in parts else None


def state_link(path: Path) -> Path | None:
    """The first symlink on the way from the `.wfops` component of `path` down to `path`
    itself (included), or None: a path with no `.wfops` component is the user's own choice
    (`--db /elsewhere/runs.db`) and is not checked."""
    top = _state_top(path)
    if top is None:
        return None
    for end in range(top, len(path.parts) + 1):
        step = Path(*path.parts[:end])
        if step.is_symlink():
            return step
    return None


def refuse_state_link(path: Path) -> None:
    """Raise `StoreError` when `state_link(path)` finds a symlink."""
    link = state_link(path)
    if link is not None:
        raise _linked(link)


def refuse_linked_state(root: Path) -> None:
    """Raise `StoreError` when the project's `.wfops`, or anything under it, is a symlink.

    Runs check this before anything reads or writes the state (the gate record, the
    store, the run lock). The walk never follows a link, and `.wfops` holds few entries."""
    top = root / STATE_DIR
    if top.is_symlink():
        raise _linked(top)
    pending = [top]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            continue  # unreadable: whatever opens it next reports why
        for entry in entries:
            if entry.is_symlink():
                raise _linked(Path(entry.path))
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))


def make_state_dir(directory: Path) -> None:
    """Create `directory` (and parents), refusing a symlink from its `.wfops` component down
    (`StoreError`); make git ignore that `.wfops/`."""
    refuse_state_link(directory)
    directory.mkdir(parents=True, exist_ok=True)
    refuse_state_link(directory)  # a link that appeared while the directories were made
    top = _state_top(directory)
    if top is None:
        return
    # deferred: writing is off the validate cache-hit path, which only reads the state (`state_link`)
    from wfops.atomic import write_atomic

    ignore = Path(*directory.parts[:top]) / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(WfopsError):  # a read-only checkout: git may show it, nothing breaks
            write_atomic(ignore, "# wfops local state (run store, caches): never committed\n*\n", durable=False)


def _linked(link: Path) -> StoreError:
    return StoreError(f"{link} is a symlink; wfops keeps its state (run store, caches, locks) inside the project "
                      "and never writes through one",
                      hint=f"remove the link (`rm {link}`): wfops creates a real {STATE_DIR}/ itself, and it is "
                           "never committed")
