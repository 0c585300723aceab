"""The step cache as the core API serves it (`Project.cache_entries`, `cache_entry`,
`clear_cache`); `wfops cache list|show|clear` and the MCP server only render these."""

from __future__ import annotations

from typing import Any

from wfops.errors import InvalidArgument
from wfops.model.rules import duration_seconds
from wfops.store.cache import CacheEntry

__all__ = ["CacheEntry", "age_seconds", "entries", "entry", "clear"]

#: The shortest key prefix `cache show` takes (shorter ones match too much to be meant).
MIN_PREFIX = 6


def age_seconds(older_than: str | float | None) -> float | None:
    """`--older-than` (`30s`, `10m`, `1h`, `7d` or seconds) as seconds; InvalidArgument else."""
    if older_than is None:
        return None
    try:
        return duration_seconds(older_than)
    except ValueError as exc:
        raise InvalidArgument(f"--older-than: {exc}", argument="older_than",
                              hint="give an age such as 30s, 10m, 1h or 7d") from None


def entries(store: Any, deployment: str | None, older_than: str | float | None) -> list[CacheEntry]:
    found: list[CacheEntry] = store.cache_entries(deployment=deployment, older_than=age_seconds(older_than))
    return found


def entry(store: Any, key: str) -> CacheEntry:
    """The one entry whose key starts with `key` (with its output); `store` None: there is none yet."""
    if len(key) < MIN_PREFIX or not all(c in "0123456789abcdef" for c in key):
        raise InvalidArgument(f"{key!r} is not a cache key: give at least {MIN_PREFIX} of its hex digits",
                              argument="key", hint="`wfops cache list` shows the keys")
    found: list[CacheEntry] = store.cache_entries(key=key) if store is not None else []
    if not found:
        raise InvalidArgument(f"no cache entry with a key starting {key}", argument="key",
                              hint="`wfops cache list` shows the entries")
    if len(found) > 1:
        raise InvalidArgument(f"{len(found)} cache entries have a key starting {key}; give more of it",
                              argument="key")
    return found[0]


def clear(store: Any, deployment: str | None, older_than: str | float | None) -> int:
    cleared: int = store.cache_clear(deployment=deployment, older_than=age_seconds(older_than))
    return cleared
