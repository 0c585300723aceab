"""Writing a file whole or not at all, and the one message for a full disk.

Every file wfops writes (the lock, compiled artifacts, caches, scaffolds, reports)
goes through `write_atomic`: the text goes to a fresh temporary file beside the
target, created exclusively (`O_CREAT | O_EXCL` with a random name), so a symlink
planted where the temporary file goes is never followed; it is flushed to disk and
renamed over the target, and a rename replaces a symlink at the target itself, never
the file it points at. A crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path

from wfops.errors import StoreError, WfopsError

#: What "the disk is full" looks like from a write: no space, a quota, a file size limit.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


def disk_full(where: str, doing: str) -> StoreError:
    """The one message for a full disk, from a commit or any other write wfops makes."""
    return StoreError(f"{where}: disk full while trying to {doing}; nothing after the last committed step was lost",
                      remedy="free disk space")


def write_atomic(path: Path, text: str, *, what: str | None = None, durable: bool = True) -> None:
    """Replace `path` with `text` (UTF-8, `\\n` newlines) atomically.

    A full disk raises `StoreError` (the store's own message); any other failure to
    write raises `WfopsError` naming the file. `what` names the file in messages.
    `durable=False` skips the fsync, for caches that may be lost in a power cut.
    """
    path = Path(path)
    shown = what or str(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _error(exc, shown) from None
    try:
        try:
            os.fchmod(fd, _mode(path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
                out.flush()
                if durable:
                    os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise _error(exc, shown) from None


def _mode(path: Path) -> int:
    """The target's permissions when it exists (never following a link), else rw-r--r--."""
    try:
        status = os.lstat(path)
    except OSError:
        return 0o644
    return 0o644 if stat.S_ISLNK(status.st_mode) else status.st_mode & 0o777


def _error(exc: OSError, shown: str) -> WfopsError:
    if is_disk_full(exc):
        return disk_full(shown, "write it")
    return WfopsError(f"cannot write {shown}: {exc.strerror or exc}")
