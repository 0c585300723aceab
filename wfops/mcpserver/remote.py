"""`wfops mcp --http`: the same server over streamable HTTP, for agents on other machines.

On a loopback host (127.0.0.1, ::1, localhost) it serves as stdio does, to this machine's
users. Any other host is reachable from the network, so it refuses to start unless the
environment variable `TOKEN_ENV` holds a bearer token, which every request must then carry
(`Authorization: Bearer <token>`; the token is also required on loopback when it is set).
A request whose `Origin` header is not the server's own (or, on loopback, a loopback origin)
is refused, so a web page in a browser cannot drive the server (DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from wfops.errors import UsageError

#: The environment variable that holds the bearer token.
TOKEN_ENV = "WFOPS_MCP_TOKEN"
#: More origins a browser-based client may call from, comma-separated (e.g. an IDE's web view).
ORIGINS_ENV = "WFOPS_MCP_ORIGINS"
PATH = "/mcp"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_for(host: str, environ: MutableMapping[str, str] | None = None) -> str | None:
    """The bearer token requests must carry; refuses a non-loopback host without one."""
    token = (os.environ if environ is None else environ).get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        raise UsageError(f"--host {host} is reachable from the network, and {TOKEN_ENV} is not set: the server "
                         "would run any tool for anyone who can reach it",
                         hint=f"set {TOKEN_ENV} to a long random token (clients send it as `Authorization: "
                              "Bearer <token>`), or serve on 127.0.0.1")
    return token


class Guard:
    """ASGI middleware: the bearer token and the Origin check, before the SDK sees the request."""

    def __init__(self, app: App, host: str, port: int, token: str | None, origins: list[str]) -> None:
        self.app = app
        self.token = token
        self.loopback = is_loopback(host)
        self.own = {f"{host}:{port}", host}
        self.origins = set(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            await _refuse(send, 403, f"origin {origin} may not call this server (set {ORIGINS_ENV} to allow it)")
            return
        if self.token is not None:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token.encode()):
                await _refuse(send, 401, f"a bearer token is required (Authorization: Bearer <the {TOKEN_ENV} "
                                         "value>)", challenge=True)
                return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        where = parts.netloc
        if where in self.own:
            return True
        return self.loopback and is_loopback(parts.hostname or "")


async def _refuse(send: Send, status: int, message: str, *, challenge: bool = False) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="wfops"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": message.encode() + b"\n"})


def serve_http(server: Any, host: str, port: int) -> None:
    """Serve `server` (an MCPServer) at http://HOST:PORT/mcp until interrupted."""
    import uvicorn  # deferred: uvicorn is for --http only

    token = token_for(host)
    origins = [o.strip() for o in os.environ.get(ORIGINS_ENV, "").split(",") if o.strip()]
    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    config = uvicorn.Config(Guard(app, host, port, token, origins), host=host, port=port, log_level="warning")
    uvicorn.Server(config).run()
