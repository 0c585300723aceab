"""Per-run exclusive locks: `fcntl.flock` on `<store dir>/locks/<run_id>.lock`.

The kernel frees a flock when its holder dies (SIGKILL included), so "status
running and nobody holds the lock" reliably means "crashed, safe to resume".
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from wfops.errors import RunBusyError, StoreError

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def lock_path(directory: Path, run_id: str) -> Path:
    if not _SAFE_ID.match(run_id):
        raise StoreError(f"run id {run_id!r} cannot name a lock file")
    return directory / f"{run_id}.lock"


@contextmanager
def run_lock(directory: Path, run_id: str) -> Iterator[None]:
    """Hold the run's lock or raise `RunBusyError` at once (never wait)."""
    path = lock_path(directory, run_id)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create lock directory {directory}: {exc.strerror}") from None
    fd = _acquire(path, run_id)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        # Unlink while still holding the lock; `_acquire` checks the inode, so a
        # process that opened the old file before the unlink retries on a fresh one.
        with suppress(OSError):
            path.unlink()
        os.close(fd)


def _acquire(path: Path, run_id: str) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
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
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
