"""HTTP clients that talk to one origin only: a source's headers (its tokens) go to the host
it declares and nowhere else, whatever a server answers (a redirect elsewhere is refused)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from wfops.errors import CapabilityError

#: The MCP SDK's own timeouts for a streamable HTTP session (its SSE stream stays open).
MCP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def origin(url: httpx2.URL | str) -> tuple[str, str, int | None]:
    parsed = httpx2.URL(url) if isinstance(url, str) else url
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return parsed.scheme, parsed.host, port


def same_host_client(base_url: str, headers: Mapping[str, str], *, timeout: float | None) -> httpx2.AsyncClient:
    """A client sending `headers`, that refuses any request to an origin other than `base_url`'s
    (before a byte is sent). Redirects are never followed by the client itself; environment
    proxies are ignored, so a token never passes through a host the project did not name."""
    home = origin(base_url)

    async def guard(request: httpx2.Request) -> None:
        if origin(request.url) != home:
            raise CapabilityError(f"refused to send a request to {request.url.scheme}://{request.url.host}: "
                                  f"the source talks only to {home[0]}://{home[1]}",
                                  hint="a server that redirects elsewhere is not followed; point the source "
                                  "at the final address")

    hooks: dict[str, list[Any]] = {"request": [guard]}
    return httpx2.AsyncClient(headers=dict(headers), follow_redirects=False, trust_env=False,
                              timeout=MCP_TIMEOUT if timeout is None else httpx2.Timeout(timeout),
                              event_hooks=hooks)
