"""Executors: where a run's capability calls happen.

An executor places each source the run uses: `local` leaves it as it is (calls run in
the driver process, as always); `dask` puts a python source behind a stand-in whose
calls are tasks on a Dask cluster. The engine never sees the difference: it calls
capabilities through the resolver, and the resolver calls the placed sources.
std and MCP sources stay in the driver with every executor (MCP: one session per run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from wfops.errors import UsageError
from wfops.sources.base import Source
from wfops.sources.scheduler import PROTOCOLS, scheduler_address

LOCAL = "local"
class Executor(Protocol):
    """Opened before the run starts (a refusal then stores nothing), closed after it."""

    name: str  # as the run's metadata records it: `local` or `dask://HOST:PORT`

    async def open(self) -> None: ...

    def place(self, source: Source) -> Source: ...

    async def close(self) -> None: ...


class LocalExecutor:
    """Today's behaviour: every call runs in the driver process."""

    name = LOCAL

    async def open(self) -> None:
        return None

    def place(self, source: Source) -> Source:
        return source

    async def close(self) -> None:
        return None


@dataclass(frozen=True)
class ExecutorChoice:
    """Which executor a run uses: `kind` `local` or `dask` (with the scheduler's address)."""

    kind: str = LOCAL
    address: str | None = None

    @property
    def name(self) -> str:
        """The form `--executor` takes (and a run's metadata keeps, for its resume)."""
        if self.kind == LOCAL:
            return LOCAL
        protocol, _, rest = (self.address or "").partition("://")
        return PROTOCOLS.get(protocol, f"dask+{protocol}://") + rest

    @classmethod
    def parse(cls, text: str) -> ExecutorChoice:
        """`local`, or `dask://HOST:PORT` (a Dask scheduler over tcp); `dask+tls://HOST:PORT` for tls.
        A malformed address (a port past 65535, say) is a `UsageError` saying what."""
        value = text.strip()
        if value == LOCAL:
            return cls()
        for protocol, scheme in PROTOCOLS.items():
            if value.startswith(scheme) and len(value) > len(scheme):
                return cls("dask", str(scheduler_address(f"{protocol}://{value[len(scheme):]}")))
        raise UsageError(f"executor {text!r} is not one wfops knows",
                         hint="use `local` or `dask://HOST:PORT` (the Dask scheduler's address)")

    @classmethod
    def of_deployment(cls, spec: object) -> ExecutorChoice:
        """From a deployment's `executor:` model (LocalExecutorSpec / DaskExecutorSpec)."""
        kind = getattr(spec, "kind", LOCAL)
        return cls(kind, getattr(spec, "address", None)) if kind != LOCAL else cls()


def make_executor(choice: ExecutorChoice, root: Path, expected: Mapping[str, str]) -> Executor:
    """The executor for `choice`. `expected`: concrete ref -> contract hash that a worker's
    code must match (the lock's); a ref missing there is checked against the driver's code."""
    if choice.kind == LOCAL:
        return LocalExecutor()
    # deferred: wfops.sources.dask_executor is the driver side of the dask extra, only for dask runs
    from wfops.sources.dask_executor import DaskExecutor

    return DaskExecutor(choice.name, choice.address or "", root, expected)


@asynccontextmanager
async def opened_executor(executor: Executor) -> AsyncIterator[Executor]:
    await executor.open()
    try:
        yield executor
    finally:
        await executor.close()
