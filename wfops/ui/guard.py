"""What keeps the UI safe to leave running: where it may listen, who may ask, and what a
browser may do with its pages.

- Loopback by default. Any other host needs a token (`WFOPS_UI_TOKEN`), which every
  request must carry: the `Authorization: Bearer` header, or `?token=` once (the answer
  sets it as a same-site, HTTP-only cookie).
- On loopback, the `Host` header must name loopback too, so a web page on another name
  that resolves to 127.0.0.1 (DNS rebinding) reads nothing.
- Every POST carries the page's CSRF token in `X-CSRF-Token` and a JSON body; a form
  another site posts has neither.
- Every answer sets a Content-Security-Policy that allows only this server's own script
  and styles (no inline script, no other origin), and forbids framing.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from dataclasses import dataclass, field

from starlette.datastructures import URL, QueryParams
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wfops.errors import UsageError

TOKEN_VARIABLE = "WFOPS_UI_TOKEN"
COOKIE = "wfops_ui_token"
CSRF_HEADER = "x-csrf-token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cache-control", b"no-store")]


def is_loopback(host: str) -> bool:
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    """Who may ask: the token (None: loopback, anyone on this machine) and the CSRF token of
    this server's pages (new each start)."""

    host: str
    token: str | None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @classmethod
    def for_host(cls, host: str) -> Access:
        token = os.environ.get(TOKEN_VARIABLE) or None
        if token is None and not is_loopback(host):
            raise UsageError(f"refusing to serve on {host}: a host other than loopback needs a token",
                             hint=f"set {TOKEN_VARIABLE} to a long random secret (every request must "
                                  "carry it), or serve on 127.0.0.1")
        return cls(host, token)


class Guard:
    """ASGI middleware applying `Access` to every HTTP request."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None and scope["method"] == "GET" and self._token_in_query(scope):
            # The token arrives once in the address (a link someone was given): keep it in a
            # cookie and send the browser to the same address without it.
            url = URL(scope=scope).remove_query_params("token")
            refusal = RedirectResponse(str(url.replace(scheme="", netloc="")) or "/", status_code=303)
            refusal.set_cookie(COOKIE, self.access.token or "", httponly=True, samesite="strict")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        if refusal is not None:
            await refusal(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if is_loopback(self.access.host):
            host = headers.get("host", "")
            if (host if host.endswith("]") else host.rsplit(":", 1)[0]) not in LOOPBACK_NAMES:
                return _refused(421, "this server answers only requests addressed to loopback")
        if self.access.token is not None and not self._authorized(scope, headers):
            return _refused(401, f"this server needs its token ({TOKEN_VARIABLE})")
        if scope["method"] not in ("GET", "HEAD"):
            if scope["method"] != "POST":
                return _refused(405, "only GET and POST are served")
            if not hmac.compare_digest(headers.get(CSRF_HEADER, ""), self.access.csrf):
                return _refused(403, "the request lacks this page's CSRF token: reload the page")
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                return _refused(415, "actions take a JSON body")
        return None

    def _authorized(self, scope: Scope, headers: dict[str, str]) -> bool:
        token = self.access.token or ""
        given = headers.get("authorization", "")
        if given.startswith("Bearer ") and hmac.compare_digest(given[7:], token):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and hmac.compare_digest(value, token):
                return True
        return self._token_in_query(scope)

    def _token_in_query(self, scope: Scope) -> bool:
        if self.access.token is None:
            return False
        query = QueryParams(scope.get("query_string", b"")).get("token")
        return query is not None and hmac.compare_digest(query, self.access.token)


def _refused(status: int, message: str) -> Response:
    return JSONResponse({"error": message, "hint": None}, status_code=status)
