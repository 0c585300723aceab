"""Per-run exclusive locks: `fcntl.flock` on `<store dir>/locks/<run_id>.lock`.

The kernel frees a flock when its holder dies (SIGKILL included), so "status
running and nobody holds the lock" reliably means "crashed, safe to resume".
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from wfops.atomic import disk_full, is_disk_full
from wfops.errors import RunBusyError, StoreError
from wfops.statedir import make_state_dir

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def lock_path(directory: Path, run_id: str) -> Path:
    if not _SAFE_ID.match(run_id):
        raise StoreError(f"run id {run_id!r} cannot name a lock file")
    return directory / f"{run_id}.lock"


@contextmanager
def run_lock(directory: Path, run_id: str, *, where: str = "store") -> Iterator[None]:
    """Hold the run's lock or raise `RunBusyError` at once (never wait).

    `where` names the store in messages: a full disk reads as it does for a commit."""
    path = lock_path(directory, run_id)
    try:
        make_state_dir(directory)  # a symlinked `.wfops/locks` is refused
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full(where, "take the run lock") from None
        raise StoreError(f"cannot create lock directory {directory}: {exc.strerror}") from None
    fd = _acquire(path, run_id, where)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as exc:
        with suppress(OSError):
            path.unlink()
        os.close(fd)
        if is_disk_full(exc):
            raise disk_full(where, "take the run lock") from None
        raise StoreError(f"cannot write lock file {path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        # Unlink while still holding the lock; `_acquire` checks the inode, so a
        # process that opened the old file before the unlink retries on a fresh one.
        with suppress(OSError):
            path.unlink()
        os.close(fd)


def _acquire(path: Path, run_id: str, where: str) -> int:
    while True:
        try:
            # O_NOFOLLOW: a symlink planted at the lock path must not have its target truncated.
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if is_disk_full(exc):
                raise disk_full(where, "take the run lock") from None
            if exc.errno == errno.ELOOP:
                raise StoreError(f"lock file {path} is a symlink; wfops never writes through one",
                                 hint="remove the link") from None
            raise StoreError(f"cannot open lock file {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise RunBusyError(f"run {run_id} is being driven by another process{who}",
                               hint="wait for it to finish, or stop that process first") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # we locked a file its previous holder had already unlinked


def _read_pid(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode(errors="replace").strip()
    except OSError:
        return ""


def is_locked(directory: Path, run_id: str) -> bool:
    """True when some live process holds the run's lock."""
    path = lock_path(directory, run_id)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
