"""Run storage. `open_store(location)` returns the backend behind the `Store` protocol:
PostgreSQL for a `postgresql://` URL, else the SQLite file at that path."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from wfops.dburl import is_url
from wfops.errors import StoreError
from wfops.store.sqlite import SqliteStore, env_timeout

if TYPE_CHECKING:
    from wfops.store.protocol import Store


def open_store(location: Path | str, *, timeout: float | None = None) -> Store:
    """Open (creating and migrating as needed) the store at `location`.

    `timeout`: seconds to wait for another process's write (and, on PostgreSQL, to
    connect); default $WFOPS_DB_TIMEOUT or 10.
    """
    wait = timeout if timeout is not None else env_timeout()
    if is_url(location):
        return _postgres(str(location), wait)
    return SqliteStore(Path(location), timeout=wait)


def _postgres(url: str, timeout: float | None) -> Store:
    try:
        # deferred: psycopg (~100 ms with libpq), loaded only for a PostgreSQL store
        from wfops.store.postgres import PostgresStore
    except ImportError as exc:  # psycopg missing, or installed without a libpq to use
        if not (exc.name or "psycopg").startswith("psycopg"):
            raise
        raise StoreError(f"a PostgreSQL store needs psycopg 3, which cannot be loaded ({exc.msg})",
                         hint="pip install 'wfops[postgres]'") from None
    return PostgresStore(url, timeout=timeout)
