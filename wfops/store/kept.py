"""One store connection an embedding program keeps across its runs.

Opening a store costs a connection, its pragmas, a schema read and, on closing, the WAL's
checkpoint (four fdatasyncs on SQLite): small for one command, a real share of a program
that starts many runs. `KeptStore` holds one open store for one owner (a `Project`) until
`close()`; a run borrows it with `take` and hands it back with `give_back`. One run at a
time uses it: a run that finds it lent out (another thread of the same program) opens a
store of its own, closed after that run, since one connection cannot hold two
transactions at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from wfops.dburl import is_url
from wfops.errors import StoreError, WfopsError
from wfops.store import open_store

if TYPE_CHECKING:
    from wfops.store.protocol import Store


class KeptStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._store: Store | None = None
        self._location: Path | str | None = None
        self._identity: tuple[int, int] | None = None  # the SQLite file the connection has open

    def take(self, location: Path | str) -> Store:
        """The kept store at `location` (opened now if need be), or a fresh one while it is lent."""
        if not self._lock.acquire(blocking=False):
            return open_store(location)
        try:
            if self._store is not None and (self._location != location or _identity(location) != self._identity):
                self._drop()  # another store, or the file was removed or replaced since: open what is there now
            if self._store is None:
                self._store = open_store(location)
                self._location = location
                self._identity = _identity(location)
        except BaseException:
            self._lock.release()
            raise
        return self._store

    def give_back(self, store: Store, *, failed: bool = False) -> None:
        """After a run: the kept store stays open for the next one, unless the run failed in a
        way that may have left the connection unusable; any other store is closed."""
        if store is not self._store:
            store.close()
            return
        try:
            if failed:
                self._drop()
            else:
                store.forget_runs()  # the next run starts from what the store holds, as a fresh one would
        finally:
            self._lock.release()

    @contextmanager
    def lent(self, location: Path | str) -> Iterator[Store]:
        """`take` and `give_back` around a block: a store error or a bug inside counts as failed;
        any other wfops error (an unknown run, a refusal) leaves the connection as it was."""
        store = self.take(location)
        try:
            yield store
        except BaseException as exc:
            self.give_back(store, failed=isinstance(exc, StoreError) or not isinstance(exc, WfopsError))
            raise
        self.give_back(store)

    def close(self) -> None:
        """Close the kept store (waiting for a run that has it to hand it back)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        store, self._store, self._location, self._identity = self._store, None, None, None
        if store is not None:
            store.close()


def _identity(location: Path | str) -> tuple[int, int] | None:
    """The SQLite file at `location` (device, inode), so a kept connection never writes to a
    file that was deleted or moved aside; None for a server URL or a file that is not there."""
    if is_url(location):
        return None
    try:
        info = os.stat(location)
    except OSError:
        return None
    return info.st_dev, info.st_ino
