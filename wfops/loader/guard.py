"""The one guard for every path a user or an agent names: it must lie inside the project.

Symlinks are resolved before the test, so neither `..`, an absolute path nor a link
leads out of the project root (a `UsageError`); a NUL byte is refused before the file system
sees it, and a name longer than file systems take or a path the system cannot look up is an
`InvalidArgument` naming the argument, before any caller touches the file system with it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from wfops.errors import InvalidArgument, UsageError

#: The longest file name (one path component) and whole path, in bytes, Linux and macOS take.
NAME_MAX = 255
PATH_MAX = 4096
_SHOWN = 80  # characters of an over-long path a message quotes


def inside_project(root: Path, raw: str | Path, *, base: Path | None = None, what: str = "path",
                   argument: str | None = None) -> Path:
    """`raw` resolved (relative to `base`, default the root): `UsageError` when it leads outside
    `root`, `InvalidArgument` (naming `argument`, default `what`) when it cannot be looked up."""
    text = str(raw)
    named = argument or what
    shown = _short(text)
    if "\0" in text:
        raise UsageError(f"{what} {shown!r} contains a NUL byte", hint="give a file or folder path")
    _check_lengths(text, what, named)
    project = root.resolve()
    try:
        resolved = ((base or project) / text).resolve()
        _look_up(resolved)
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name the file system refuses, ...
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InvalidArgument(f"{what} {shown}: cannot be resolved ({why})", argument=named) from None
    if not resolved.is_relative_to(project):
        raise UsageError(f"{what} {shown} is outside the project ({project})",
                         hint="wfops reads only files under the project root; give a path inside it")
    return resolved


def looked_up(raw: str | Path, *, what: str, argument: str | None = None) -> Path:
    """A path a user names that may lie anywhere (`--project`, `--db`, `--input-file`), as a
    `Path`: `InvalidArgument` when the system could not even look it up (a name too long, a
    NUL byte, ...); that it does not exist is for the caller to say."""
    text = str(raw)
    named = argument or what
    if "\0" in text:
        raise UsageError(f"{what} {_short(text)!r} contains a NUL byte")
    _check_lengths(text, what, named)
    try:
        _look_up(Path(text))
    except OSError as exc:
        raise InvalidArgument(f"{what} {_short(text)}: cannot be looked up ({exc.strerror or exc})",
                              argument=named) from None
    return Path(text)


def _check_lengths(text: str, what: str, named: str) -> None:
    encoded = os.fsencode(text)
    if len(encoded) > PATH_MAX:
        raise InvalidArgument(f"{what} {_short(text)} is {len(encoded)} bytes long; a path is at most {PATH_MAX}",
                              argument=named)
    for part in encoded.split(b"/"):
        if len(part) > NAME_MAX:
            raise InvalidArgument(f"{what} {_short(text)} has a name of {len(part)} bytes; a file or folder "
                                  f"name is at most {NAME_MAX}", argument=named, hint="give a shorter name")


def _look_up(path: Path) -> None:
    """Raise what the system says about `path`, unless that is only that it does not exist."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def relative_name(root: Path, path: Path) -> str:
    """`path` (resolved, inside `root`) as a project-relative posix name; "" for the root itself."""
    rel = path.relative_to(root.resolve()).as_posix()
    return "" if rel == "." else rel
