"""The step cache's rows, in both backends: call steps' successes by key, and which trace
entries were served from which.

A success of a cached step is written by the same transaction as its trace entry (its
`cache_note`), and so is a hit's row: a crash leaves both or neither. Limits, read from the
environment when a store writes or reads the cache:

- `WFOPS_CACHE_MAX_AGE` (a duration, default `30d`): an older entry is never served, and
  `runs prune` removes it;
- `WFOPS_CACHE_MAX_BYTES` (default 256 MiB): past it, a new entry pushes out the entries
  used least recently.

An entry a live run (running or interrupted) was served from is never removed by either.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from wfops.engine.types import CachedResult, RunSnapshot, TraceEntry
from wfops.errors import UsageError
from wfops.model.rules import duration_seconds
from wfops.store.protocol import FINISHED
from wfops.store.rows import dump, load, now, stamp

MAX_AGE_ENV = "WFOPS_CACHE_MAX_AGE"
MAX_BYTES_ENV = "WFOPS_CACHE_MAX_BYTES"
DEFAULT_MAX_AGE = "30d"
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

_COLUMNS = "key, deployment, capability, contract, outcome, run_id, step, seq, seconds, size, hits, created_at, used_at"
_LIVE = f"status NOT IN ({', '.join(repr(s) for s in FINISHED)})"
# Keys some live run was served from: kept by every removal.
_IN_USE = f"SELECT h.key FROM cache_hits h JOIN runs r ON r.id = h.run_id WHERE r.{_LIVE}"


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One stored success, as `wfops cache list` shows it (`output` only when asked for)."""

    key: str
    deployment: str | None
    capability: str
    contract: str
    outcome: str
    run_id: str
    step: str
    seq: int
    seconds: float
    size: int
    hits: int
    created_at: str
    used_at: str
    output: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "deployment": self.deployment, "capability": self.capability,
                "contract": self.contract, "outcome": self.outcome,
                "origin": {"run_id": self.run_id, "step": self.step, "seq": self.seq},
                "seconds": self.seconds, "size": self.size, "hits": self.hits,
                "created_at": self.created_at, "used_at": self.used_at}


def max_age() -> float:
    """Seconds an entry is served at most (`WFOPS_CACHE_MAX_AGE`)."""
    text = os.environ.get(MAX_AGE_ENV, "").strip() or DEFAULT_MAX_AGE
    try:
        return duration_seconds(text)
    except ValueError as exc:
        raise UsageError(f"{MAX_AGE_ENV}={text!r}: {exc}", hint="e.g. WFOPS_CACHE_MAX_AGE=7d") from None


def max_bytes() -> int:
    """Bytes of outputs the cache holds at most (`WFOPS_CACHE_MAX_BYTES`)."""
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    if not text.isdigit():
        raise UsageError(f"{MAX_BYTES_ENV}={text!r} is not a number of bytes", hint="e.g. WFOPS_CACHE_MAX_BYTES=1000000")
    return int(text)


def limits() -> tuple[float, int]:
    """Both limits, read now: a bad value is a usage error before a run starts, not mid-run."""
    return max_age(), max_bytes()


def cutoff(seconds: float) -> str:
    """The stamp `seconds` ago (an age past the calendar means "any")."""
    try:
        return stamp(datetime.now(UTC) - timedelta(seconds=seconds))
    except OverflowError:
        return ""


class _Writes(Protocol):
    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


class CacheStore:
    """The step cache half of a SQL store (`wfops.store.base.SqlStore` mixes it in)."""

    name: str
    conn: Any

    def _errors(self, doing: str) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _transaction(self, doing: str) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        """`text`, written with SQLite's parameters, in the store's dialect."""
        raise NotImplementedError

    # -- the engine's side (`StepCache`) ---------------------------------------------------

    def cache_lookup(self, key: str, max_age_s: float | None) -> CachedResult | None:
        limit = max_age()
        since = cutoff(limit if max_age_s is None else min(max_age_s, limit))
        with self._errors("read the step cache"):
            row = self.conn.execute(self._sql(
                "SELECT outcome, output, run_id, step, seq, seconds, extra FROM step_cache "
                "WHERE key=? AND created_at >= ?"),
                (key, since)).fetchone()
        if row is None:
            return None
        return CachedResult(row[0], load(row[1]), row[2], row[3], int(row[4]), float(row[5]), load(row[6]))

    def _write_cache(self, tx: _Writes, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        """The cache rows of a commit's entries (inside its transaction)."""
        moment = now()
        wrote = False
        for entry in entries:
            note = entry.cache_note
            if note is None or entry.error is not None:
                continue
            if entry.cached is not None:  # a hit: which entry served it
                origin = entry.cached
                tx.execute(self._sql("INSERT INTO cache_hits VALUES (?, ?, ?, ?, ?, ?, ?)"),
                           (run.run_id, entry.seq, note.key, origin["run_id"], origin["step"], origin["seq"],
                            float(origin["saved"])))
                tx.execute(self._sql("UPDATE step_cache SET hits = hits + 1, used_at = ? WHERE key = ?"),
                           (moment, note.key))
                continue
            output = dump(entry.output)
            tx.execute(self._sql(
                f"INSERT INTO step_cache ({_COLUMNS}, output, extra) VALUES (?,?,?,?,?,?,?,?,?,?,0,?,?,?,?) "
                "ON CONFLICT (key) DO UPDATE SET deployment=excluded.deployment, capability=excluded.capability, "
                "contract=excluded.contract, outcome=excluded.outcome, output=excluded.output, "
                "extra=excluded.extra, "
                "run_id=excluded.run_id, step=excluded.step, seq=excluded.seq, seconds=excluded.seconds, "
                "size=excluded.size, hits=0, created_at=excluded.created_at, used_at=excluded.used_at"),
                (note.key, run.deployment, note.capability, note.contract, entry.outcome or "ok", run.run_id,
                 entry.step, entry.seq, note.seconds, len(output or ""), moment, moment, output,
                 dump(entry.extra)))
            wrote = True
        if wrote:
            self._evict(tx)

    def _evict(self, tx: _Writes) -> None:
        """Past the size limit: drop the entries used least recently (not those in use)."""
        limit = max_bytes()
        total = tx.execute(self._sql("SELECT COALESCE(SUM(size), 0) FROM step_cache")).fetchone()[0]
        if int(total) <= limit:
            return
        rows = tx.execute(self._sql(f"SELECT key, size FROM step_cache WHERE key NOT IN ({_IN_USE}) "
                                    "ORDER BY used_at, key")).fetchall()
        drop = []
        for key, size in rows:
            if total <= limit:
                break
            drop.append(key)
            total -= int(size)
        for key in drop:
            tx.execute(self._sql("DELETE FROM step_cache WHERE key = ?"), (key,))

    def _trace_hits(self, run_id: str) -> dict[int, dict[str, Any]]:
        """The origins of a run's entries that were served from the cache, by seq."""
        with self._errors("read a trace"):
            rows = self.conn.execute(self._sql(
                "SELECT seq, origin_run, origin_step, origin_seq, saved FROM cache_hits WHERE run_id=?"),
                (run_id,)).fetchall()
        return {int(r[0]): {"run_id": r[1], "step": r[2], "seq": int(r[3]), "saved": float(r[4])} for r in rows}

    def _prune_cache(self, tx: _Writes, before: str) -> int:
        """Remove entries made before `before` or past the age limit, but none a live run used."""
        since = max(before, cutoff(max_age()))
        cur = tx.execute(self._sql(f"DELETE FROM step_cache WHERE created_at < ? AND key NOT IN ({_IN_USE})"),
                         (since,))
        return int(cur.rowcount or 0)

    # -- `wfops cache` ---------------------------------------------------------------------

    def cache_entries(self, *, deployment: str | None = None, older_than: float | None = None,
                      key: str | None = None) -> list[CacheEntry]:
        """Entries, newest first; `key`: those whose key starts with it (with their outputs)."""
        where, args = self._filter(deployment, older_than, key)
        with self._errors("read the step cache"):
            rows = self.conn.execute(self._sql(f"SELECT {_COLUMNS}, output FROM step_cache{where} "
                                               "ORDER BY created_at DESC, key"), args).fetchall()
        return [CacheEntry(r[0], r[1], r[2], r[3], r[4], r[5], r[6], int(r[7]), float(r[8]), int(r[9]), int(r[10]),
                           r[11], r[12], output=load(r[13]) if key is not None else None) for r in rows]

    def cache_clear(self, *, deployment: str | None = None, older_than: float | None = None) -> int:
        """Remove entries (those of `deployment`, made more than `older_than` seconds ago);
        entries a live run was served from stay. How many were removed."""
        where, args = self._filter(deployment, older_than, None)
        keep = f"{' AND' if where else ' WHERE'} key NOT IN ({_IN_USE})"
        with self._transaction("clear the step cache") as tx:
            cur = tx.execute(self._sql(f"DELETE FROM step_cache{where}{keep}"), args)
            return int(cur.rowcount or 0)

    @staticmethod
    def _filter(deployment: str | None, older_than: float | None, key: str | None) -> tuple[str, list[Any]]:
        clauses, args = [], []
        if deployment is not None:
            clauses.append("deployment = ?")
            args.append(deployment)
        if older_than is not None:
            clauses.append("created_at < ?")
            args.append(cutoff(older_than))
        if key is not None:
            clauses.append("key LIKE ?")
            args.append(key.replace("%", "").replace("_", "") + "%")
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def attach_hits(entries: list[TraceEntry], hits: dict[int, dict[str, Any]]) -> list[TraceEntry]:
    for entry in entries:
        origin = hits.get(entry.seq)
        if origin is not None:
            entry.cached = origin
    return entries
