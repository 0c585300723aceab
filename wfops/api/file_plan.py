"""Write a set of files all or nothing: `init` must never leave half a scaffold behind
(a partial one would then block a retry with "already exists").

Every obstacle that can be seen beforehand (a file where a folder goes, a folder where
a file goes) is named before anything is written; a failure while writing (a full
disk, a read-only folder) undoes what was written and created so far.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from wfops.atomic import write_atomic
from wfops.errors import UsageError, WfopsError


def check_plan(files: Sequence[tuple[Path, str]], shown: Path) -> None:
    """UsageError naming the first path that is in the way of writing `files`."""
    for path, _ in files:
        try:
            blocked = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
            folder = path.is_dir()
        except OSError:
            continue  # a name the system refuses: writing reports it, and undoes the rest
        if blocked is not None:
            raise UsageError(f"{_show(blocked, shown)} is a file where the project needs a folder "
                             f"(for {_show(path, shown)}); nothing was written",
                             hint="move or rename that file, then run `wfops init` again")
        if folder:
            raise UsageError(f"{_show(path, shown)} is a folder where the project needs a file; "
                             "nothing was written", hint="move or rename that folder, then run `wfops init` again")


def write_all(files: Sequence[tuple[Path, str]], shown: Path) -> None:
    """Write every `(path, text)`; on failure restore what was there and raise WfopsError."""
    check_plan(files, shown)
    created: list[Path] = []
    previous: list[tuple[Path, bytes | None]] = []
    try:
        for path, text in files:
            for parent in reversed(path.parents):
                if not parent.exists():
                    parent.mkdir()
                    created.append(parent)
            previous.append((path, path.read_bytes() if path.exists() else None))
            write_atomic(path, text)
    except OSError as exc:
        _undo(previous, created)
        where = _show(Path(exc.filename), shown) if exc.filename else str(shown)
        raise WfopsError(f"cannot write {where}: {exc.strerror or exc}; nothing was written",
                         hint="choose a directory you can write to, or free some space") from None
    except WfopsError as exc:  # the atomic writer's own (a full disk stays a StoreError, exit 4)
        _undo(previous, created)
        raise type(exc)(f"{exc.message}; nothing was written",
                        hint=exc.hint or "choose a directory you can write to, or free some space") from None


def _undo(previous: list[tuple[Path, bytes | None]], created: list[Path]) -> None:
    for path, before in reversed(previous):
        try:
            if before is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(before)
        except OSError:
            pass  # best effort: the error that stopped us is the one to report
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _show(path: Path, base: Path) -> str:
    """A path as the user gave the target: relative to it when below, else as is."""
    try:
        return (base / path.resolve().relative_to(base.resolve())).as_posix()
    except ValueError:
        return str(path)
