"""Executors: where a run's capability calls happen.

An executor places each source the run uses: `local` leaves it as it is (calls run in
the driver process, as always); `dask` puts a python source behind a stand-in whose
calls are tasks on a Dask cluster. The engine never sees the difference: it calls
capabilities through the resolver, and the resolver calls the placed sources.
std and MCP sources stay in the driver with every executor (MCP: one session per run).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from wfops.errors import UsageError
from wfops.sources.base import Source

LOCAL = "local"
DASK_SCHEME = "dask://"
#: The Dask comm protocols wfops connects to, each with the `--executor` scheme that names it.
#: (Dask's others are not offered: `inproc://` reaches only a scheduler inside this very
#: process, and `ws://`, `wss://` and `ucx://` need extras wfops does not install.)
PROTOCOLS = {"tcp": DASK_SCHEME, "tls": "dask+tls://"}
_FORM = "tcp://HOST:PORT or tls://HOST:PORT"


@dataclass(frozen=True)
class SchedulerAddress:
    """A Dask scheduler's address, checked: a protocol wfops connects to, a host name that
    can be resolved (or an IP address), a port from 1 to 65535."""

    protocol: str
    host: str  # an IPv6 address without its brackets
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.protocol}://{host}:{self.port}"


def scheduler_address(text: str) -> SchedulerAddress:
    """Parse `PROTOCOL://HOST:PORT`; anything a connection would fail on with an exception
    of its own (a port past 65535, a 300-character host) is a `UsageError` saying what."""
    protocol, sep, rest = text.partition("://")
    if not sep:
        raise UsageError(f"executor address {_shown(text)} has no scheme", hint=f"write it as {_FORM}")
    if protocol not in PROTOCOLS:
        raise UsageError(f"executor address {_shown(text)}: wfops cannot connect to a Dask scheduler over "
                         f"`{protocol}://`", hint=f"use {_FORM}")
    host, colon, port = rest.rpartition(":")
    if not colon or not port:
        raise UsageError(f"executor address {_shown(text)} has no port", hint=f"write it as {_FORM}")
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError(f"executor address {_shown(text)}: port {port!r} is not a number from 1 to 65535",
                         hint="the Dask scheduler listens on 8786 by default")
    return SchedulerAddress(protocol, _host(host, text), int(port))


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _host(host: str, text: str) -> str:
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            raise UsageError(f"executor address {_shown(text)}: {host} is not an IPv6 address",
                             hint=f"write it as {_FORM}") from None
    problem = None
    if not host:
        problem = "has no host"
    elif len(host) > 253:
        problem = f"has a host of {len(host)} characters; a host name has at most 253"
    elif any(c.isspace() or c in ":/[]@?#" for c in host):
        problem = f"has a host {host!r} that is not a host name"
    else:
        try:  # what the resolver does with it: a label of 64+ characters, or an empty one, fails
            host.encode("idna")
        except UnicodeError:
            problem = f"has a host {host!r} that is not a host name (each dot-separated label: 1 to 63 characters)"
    if problem is not None:
        raise UsageError(f"executor address {_shown(text)} {problem}", hint=f"write it as {_FORM}")
    return host


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
