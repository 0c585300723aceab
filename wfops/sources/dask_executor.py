"""The driver side of the Dask executor (`executor: {kind: dask, address: ...}`).

The driver keeps one asynchronous `distributed.Client` for the run, on the run's event
loop. A python source is placed behind `DaskPythonSource`: its capabilities (and so the
output checks the resolver makes) are the driver's, its calls are Dask tasks running
`wfops.sources.dask_worker.call_on_worker`. Results come back to the driver, which stays
the only writer of the run store.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wfops.errors import CapabilityError, RefusedError, SourceLost
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext
from wfops.sources.base import Source as SourceProtocol
from wfops.sources.dask_worker import call_on_worker, declaration_of
from wfops.sources.scheduler import scheduler_address

#: Seconds to reach the scheduler before the run is refused: an unreachable cluster must
#: fail fast, not hang a CI job.
CONNECT_TIMEOUT = 5
#: Seconds to tell the scheduler that a timed-out task is no longer wanted.
CANCEL_TIMEOUT = 5
_START_HINT = "start it (`dask scheduler`), or fix the deployment's `executor.address` or --executor"


class RemoteCallError(CapabilityError):
    """A call that failed on a worker, with the type and message a local call would have had."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


class DaskExecutor:
    def __init__(self, name: str, address: str, root: Path, expected: Mapping[str, str]) -> None:
        self.name = name
        self.address = address
        self.root = str(Path(root).resolve())
        self.expected = dict(expected)
        self.client: Any = None
        self._batch: list[tuple[tuple[Any, ...], str, asyncio.Future[Any]]] = []

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

    def submit(self, args: tuple[Any, ...], key: str) -> asyncio.Future[Any]:
        """The Dask future of one call, once submitted. The calls made in one turn of the event
        loop (a parallel foreach starts all its items in one) go to the scheduler as one graph:
        one `client.map` costs the scheduler far less than as many `client.submit`s."""
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._batch.append((args, key, waiter))
        if len(self._batch) == 1:
            asyncio.get_running_loop().call_soon(self._flush)
        return waiter

    def _flush(self) -> None:
        batch = [call for call in self._batch if not call[2].cancelled()]
        self._batch = []
        if not batch:
            return
        try:
            columns = [list(column) for column in zip(*(args for args, _, _ in batch), strict=True)]
            futures = self.client.map(call_on_worker, *columns, key=[key for _, key, _ in batch], pure=False)
        except Exception as exc:  # the client is closed or broken: each call fails on its own
            for _, _, waiter in batch:
                waiter.set_exception(exc)
            return
        for (_, _, waiter), future in zip(batch, futures, strict=True):
            waiter.set_result(future)

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
        submitted = self.executor.submit((self.executor.root, self.module, self.id, name, expected, payload,
                                          shown), f"wfops-{ref}-{uuid.uuid4().hex}")
        try:
            record = await (await submitted)
        except asyncio.CancelledError:
            # The step timed out (or the run stops): free the cluster of a task nobody awaits.
            if submitted.done() and not submitted.cancelled():
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.executor.client.cancel([submitted.result()]), CANCEL_TIMEOUT)
            submitted.cancel()
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
