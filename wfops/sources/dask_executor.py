"""The driver side of the Dask executor (`executor: {kind: dask, address: ...}`).

The driver keeps one asynchronous `distributed.Client` for the run, on the run's event
loop. A python source is placed behind `DaskPythonSource`: its capabilities (and so the
output checks the resolver makes) are the driver's, its calls go to the cluster in chunks:
one Dask task (`wfops.sources.dask_worker.run_chunk`) runs several calls and returns one
record per call. Records come back to the driver, which stays the only writer of the run
store.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wfops.errors import CapabilityError, RefusedError, SourceLost
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext
from wfops.sources.base import Source as SourceProtocol
from wfops.sources.dask_worker import Call, declaration_of, run_chunk
from wfops.sources.scheduler import scheduler_address

#: Seconds to reach the scheduler before the run is refused: an unreachable cluster must
#: fail fast, not hang a CI job.
CONNECT_TIMEOUT = 5
#: Seconds to tell the scheduler that a timed-out task is no longer wanted.
CANCEL_TIMEOUT = 5
#: How long one chunk should run on its worker. Its calls' results come back, and are
#: committed, a chunk at a time: longer chunks would hold results back and make a lost
#: worker cost more calls.
CHUNK_SECONDS = 0.05
#: Chunks per worker thread, at least, in one turn's calls: every thread gets work, and the
#: last chunks to finish do not leave the others idle for long.
CHUNKS_PER_THREAD = 4
#: The most calls one task carries.
MAX_CHUNK = 256
_START_HINT = "start it (`dask scheduler`), or fix the deployment's `executor.address` or --executor"


class RemoteCallError(CapabilityError):
    """A call that failed on a worker, with the type and message a local call would have had."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def chunk_size(calls: int, threads: int, seconds: float) -> int:
    """Calls per task, for `calls` calls of one capability made in one turn on `threads` worker
    threads, each call having taken `seconds` on a worker: as many as fit in `CHUNK_SECONDS`,
    but no more than gives each thread `CHUNKS_PER_THREAD` chunks, and at most `MAX_CHUNK`."""
    by_time = int(CHUNK_SECONDS / seconds) if seconds > 0 else MAX_CHUNK
    by_threads = -(-calls // (threads * CHUNKS_PER_THREAD))
    return max(1, min(by_time, by_threads, MAX_CHUNK))


@dataclass(slots=True, eq=False)
class Pending:
    """One call: queued, held, or in a chunk on the cluster."""

    ref: str
    call: Call
    waiter: asyncio.Future[dict[str, Any]]
    chunk: Chunk | None = None


@dataclass(slots=True, eq=False)
class Chunk:
    """Calls of one capability that run as one Dask task, one after the other."""

    ref: str
    calls: list[Pending]
    future: Any = None  # the task's Dask future, until its records are handed out

    def fail(self, exc: Exception) -> None:
        for pending in self.calls:
            if not pending.waiter.done():
                pending.waiter.set_exception(exc)


class DaskExecutor:
    def __init__(self, name: str, address: str, root: Path, expected: Mapping[str, str]) -> None:
        self.name = name
        self.address = address
        self.root = str(Path(root).resolve())
        self.expected = dict(expected)
        self.client: Any = None
        self._batch: list[Pending] = []  # the calls made in this turn of the event loop
        self._held: dict[str, list[Pending]] = {}  # ref -> calls waiting for its first measurement
        self._seconds: dict[str, float] = {}  # ref -> mean seconds of a call on a worker, last chunk
        self._collectors: set[asyncio.Future[None]] = set()

    async def open(self) -> None:
        try:
            # deferred: distributed (~300 ms and a scheduler connection), only for runs on Dask
            from distributed import Client
        except ImportError:
            raise RefusedError(f"executor {self.name} needs Dask distributed, which is not installed",
                               hint="pip install 'wfops[dask]'") from None
        await self._probe()
        connect: Any = Client  # distributed's constructor is untyped
        client = connect(self.address, asynchronous=True, timeout=CONNECT_TIMEOUT, set_as_default=False)
        try:
            self.client = await client
        except Exception as exc:  # unreachable, refused, wrong protocol: the run does not start
            with contextlib.suppress(Exception):
                await client.close()
            reason = str(exc).strip() or type(exc).__name__
            raise RefusedError(f"cannot reach the Dask scheduler at {self.address}: {reason}",
                               hint=_START_HINT) from None

    async def _probe(self) -> None:
        """A tcp scheduler that refuses connections refuses the run at once (Dask itself
        would retry until its timeout)."""
        address = scheduler_address(self.address)
        if address.protocol != "tcp":
            return
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(address.host, address.port),
                                               CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "no answer"
            raise RefusedError(f"cannot reach the Dask scheduler at {self.address}: {reason}",
                               hint=_START_HINT) from None
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    def submit(self, ref: str, call: Call) -> Pending:
        """Queue one call; its `waiter` gets the worker's record (or the cluster's exception).
        The calls made in one turn of the event loop (a parallel foreach starts all its items
        in one) are cut into chunks (`chunk_size`) and go to the scheduler as one `client.map`."""
        pending = Pending(ref, call, asyncio.get_running_loop().create_future())
        self._batch.append(pending)
        if len(self._batch) == 1:
            asyncio.get_running_loop().call_soon(self._flush)
        return pending

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        by_ref: dict[str, list[Pending]] = {}
        for pending in batch:
            by_ref.setdefault(pending.ref, []).append(pending)
        chunks: list[Chunk] = []
        for ref, calls in by_ref.items():
            chunks += self._chunks(ref, calls)
        self._send(chunks)

    def _chunks(self, ref: str, calls: list[Pending]) -> list[Chunk]:
        """`calls` cut into chunks. A capability's first calls go one per task, one per worker
        thread, and the rest wait until one of them is back: its time on the worker sizes them."""
        calls = [c for c in calls if not c.waiter.done()]
        if not calls:
            return []
        threads = self._threads()
        if ref not in self._seconds:
            if ref in self._held:
                self._held[ref] += calls
                return []
            calls, self._held[ref] = calls[:threads], calls[threads:]
            return [Chunk(ref, [c]) for c in calls]
        size = chunk_size(len(calls), threads, self._seconds[ref])
        return [Chunk(ref, calls[i:i + size]) for i in range(0, len(calls), size)]

    def _threads(self) -> int:
        """The cluster's worker threads, as the client last heard from the scheduler."""
        info = self.client.scheduler_info() if self.client is not None else {}
        return max(1, sum(int(w.get("nthreads", 1)) for w in dict(info.get("workers") or {}).values()))

    def _release(self, ref: str) -> None:
        """A capability's calls held for its first measurement go now, sized by it (one per
        task when its first calls came back without one: lost, cancelled)."""
        held = self._held.pop(ref, None)
        if held is None:
            return
        self._seconds.setdefault(ref, CHUNK_SECONDS)  # unmeasured: a chunk of one
        self._send(self._chunks(ref, held))

    def _send(self, chunks: list[Chunk]) -> None:
        if not chunks:
            return
        try:
            futures = self.client.map(run_chunk, [self.root] * len(chunks), [[c.call for c in k.calls] for k in chunks],
                                      key=[f"wfops-{k.ref}-{uuid.uuid4().hex}" for k in chunks], pure=False)
        except Exception as exc:  # the client is closed or broken: each call fails on its own
            for chunk in chunks:
                chunk.fail(exc)
            for ref in {chunk.ref for chunk in chunks}:
                self._release(ref)  # the calls held for these fail the same way
            return
        for chunk, future in zip(chunks, futures, strict=True):
            chunk.future = future
            for pending in chunk.calls:
                pending.chunk = chunk
        task = asyncio.ensure_future(self._collect(chunks))
        self._collectors.add(task)
        task.add_done_callback(self._collectors.discard)

    async def _collect(self, chunks: list[Chunk]) -> None:
        """Hand each chunk's records to its calls as chunks finish: the chunks that are back
        together are fetched in one `gather` (one round trip), not one fetch per call."""
        # deferred: distributed, imported by `open` already; only for runs on Dask
        from distributed import as_completed

        completed: Any = as_completed  # untyped
        of = {id(k.future): k for k in chunks}
        finished = completed([k.future for k in chunks], loop=self.client.loop)
        async for first in finished:
            done = [first, *finished.next_batch(block=False)]
            back = [f for f in done if f.status == "finished"]
            if back:
                try:
                    results = await self.client.gather(back)
                except Exception as exc:  # the scheduler went away between the two
                    results = [exc] * len(back)
                for future, records in zip(back, results, strict=True):
                    self._deliver(of[id(future)], records)
            for future in done:
                if future.status != "finished":
                    try:
                        await future
                        raise RuntimeError("the task ended without a result")
                    except Exception as exc:  # lost worker, lost scheduler, cancelled
                        self._deliver(of[id(future)], exc)

    def _deliver(self, chunk: Chunk, records: list[dict[str, Any]] | Exception) -> None:
        if isinstance(records, Exception):
            chunk.fail(records)
        else:
            seconds = [float(r.get("seconds", 0.0)) for r in records]
            self._seconds[chunk.ref] = sum(seconds) / max(1, len(seconds))
            for pending, record in zip(chunk.calls, records, strict=True):
                if not pending.waiter.done():
                    pending.waiter.set_result(record)
        chunk.future = None
        self._release(chunk.ref)

    async def abandon(self, pending: Pending) -> None:
        """A call nobody awaits any more (its step timed out, the run stops): once no call of
        its chunk is awaited, the chunk's task is cancelled on the cluster."""
        if not pending.waiter.done():
            pending.waiter.cancel()
        chunk = pending.chunk
        if chunk is None or chunk.future is None or not all(c.waiter.cancelled() for c in chunk.calls):
            return
        future, chunk.future = chunk.future, None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.cancel([future]), CANCEL_TIMEOUT)

    def failure(self, ref: str, exc: Exception) -> CapabilityError:
        """Why a task did not come back. A lost scheduler is the cluster lost, not the call
        failing: `SourceLost`, so a run with no retry left stops resumable (as when an MCP
        source's server dies) instead of failing for good."""
        if self._scheduler_lost(exc):
            return SourceLost(f"{ref}: the connection to the Dask scheduler at {self.address} was lost; "
                              "restart the scheduler (and its workers), then resume the run")
        return _cluster_failure(ref, exc)

    def _scheduler_lost(self, exc: Exception) -> bool:
        client = self.client
        if client is None or getattr(client, "status", "running") != "running":
            return True
        # distributed cancels every pending future when the connection drops, naming the reason.
        return "scheduler-connection-lost" in str(getattr(exc, "reason", "") or exc)

    def place(self, source: SourceProtocol) -> SourceProtocol:
        """Python, command and OpenAPI sources run on the cluster; std and MCP sources (a session
        the driver holds) stay in the driver."""
        return DaskPythonSource(source, self) if source.kind in ("python", "command", "openapi") else source

    async def close(self) -> None:
        for task in list(self._collectors):
            task.cancel()
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()


class DaskPythonSource:
    """A python (or command, or OpenAPI) source whose calls run as Dask tasks."""

    def __init__(self, inner: SourceProtocol, executor: DaskExecutor) -> None:
        self.inner = inner
        self.executor = executor
        self.id = inner.id
        self.kind: SourceKind = inner.kind
        self.module = (str(getattr(getattr(inner, "module", None), "__name__", "")) if inner.kind == "python"
                       else declaration_of(inner))

    async def open(self) -> None:
        await self.inner.open()

    def capabilities(self) -> Mapping[str, Capability]:
        return self.inner.capabilities()

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        ref = f"{self.id}.{name}"
        cap = self.inner.capabilities()[name]
        expected = self.executor.expected.get(ref) or cap.contract_hash
        shown = {"run_id": context.run_id, "workflow": context.workflow, "deployment": context.deployment,
                 "step": context.step, "attempt": context.attempt, "idempotency_key": context.idempotency_key,
                 "extra": dict(context.extra)}
        pending = self.executor.submit(ref, (self.module, self.id, name, expected, payload, shown))
        try:
            record = await pending.waiter
        except asyncio.CancelledError:
            # The step timed out (or the run stops): free the cluster of a task nobody awaits.
            await self.executor.abandon(pending)
            raise
        except Exception as exc:
            raise self.executor.failure(ref, exc) from None
        if "exit" in record:
            raise SystemExit(record["exit"])
        if "error" in record:
            raise RemoteCallError(str(record["error"]["type"]), str(record["error"]["message"]))
        return CallResult(record["outcome"], record["output"], record.get("extra"))

    async def close(self) -> None:
        await self.inner.close()


def _cluster_failure(ref: str, exc: Exception) -> RemoteCallError:
    """A task that did not come back: its worker died, or the cluster dropped it."""
    if type(exc).__name__ == "KilledWorker":
        return RemoteCallError("WorkerLost", f"{ref}: the Dask worker running it was lost ({exc})")
    return RemoteCallError("ClusterError", f"{ref}: the Dask cluster did not return a result "
                           f"({type(exc).__name__}: {str(exc).strip() or 'no detail'})")
