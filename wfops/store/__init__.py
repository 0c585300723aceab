"""Run storage. `open_store(path)` returns the SQLite backend behind the `Store` protocol."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wfops.store.sqlite import SqliteStore


def open_store(path: Path | str, *, timeout: float | None = None) -> SqliteStore:
    """Open (creating and migrating as needed) the store at `path`.

    `timeout`: seconds to wait for another process's write; default $WFOPS_DB_TIMEOUT or 10.
    """
    # deferred: wfops.store.sqlite imports sqlite3 (~3 ms), kept out of the CLI's start-up
    from wfops.store.sqlite import SqliteStore, env_timeout

    return SqliteStore(Path(path), timeout=timeout if timeout is not None else env_timeout())
