"""HTTP clients that talk to one origin only: a source's headers (its tokens) go to the host
it declares and nowhere else, whatever a server answers (a redirect elsewhere is refused)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx2

from wfops.errors import CapabilityError

#: The MCP SDK's own timeouts for a streamable HTTP session (its SSE stream stays open).
MCP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def origin(url: httpx2.URL | str) -> tuple[str, str, int | None]:
    parsed = httpx2.URL(url) if isinstance(url, str) else url
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return parsed.scheme, parsed.host, port


def same_host_client(base_url: str, headers: Mapping[str, str], *, timeout: float | None,
                     also: Sequence[str] = (), auth: httpx2.Auth | None = None,
                     owner: str | None = None) -> httpx2.AsyncClient:
    """A client sending `headers`, that refuses any request to an origin other than `base_url`'s
    (before a byte is sent). Redirects are never followed by the client itself; environment
    proxies are ignored, so a token never passes through a host the project did not name.

    `also` names further origins it may reach (an OAuth authorization server, which `auth`
    talks to); `headers` still go only to `base_url`'s origin. `owner` (e.g. "mcp source 'x'")
    starts the refusal's message."""
    home = origin(base_url)
    allowed = {home, *(origin(url) for url in also)}
    named = dict(headers)

    async def guard(request: httpx2.Request) -> None:
        at = origin(request.url)
        if at not in allowed:
            raise CapabilityError(f"{owner + ': ' if owner else ''}refused to send a request to {_shown(at)}: the source talks only to "
                                  f"{', '.join(sorted(_shown(one) for one in allowed))}",
                                  hint="a server that redirects elsewhere is not followed; point the source "
                                  "at the final address")
        if at == home:
            # As a client's default headers would be: a request's own value wins.
            for name, value in named.items():
                request.headers.setdefault(name, value)

    hooks: dict[str, list[Any]] = {"request": [guard]}
    return httpx2.AsyncClient(follow_redirects=False, trust_env=False, auth=auth,
                              timeout=MCP_TIMEOUT if timeout is None else httpx2.Timeout(timeout),
                              event_hooks=hooks)


def _shown(at: tuple[str, str, int | None]) -> str:
    scheme, host, port = at
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"
