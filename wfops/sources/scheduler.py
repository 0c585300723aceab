"""A Dask scheduler's address, checked once, by one rule: the executor's `--executor`, the
Dask driver and validate's executor check all parse it here, so what validates connects."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from wfops.errors import UsageError

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
