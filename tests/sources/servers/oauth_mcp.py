"""An MCP server that requires OAuth bearer tokens, and the authorization server issuing them.

Run as `python tests/sources/servers/oauth_mcp.py MCP_PORT AS_PORT CLIENT_ID CLIENT_SECRET LOG`.
Two origins on loopback, as in a real deployment: the MCP server (the SDK's resource server:
`MCPServer(token_verifier=..., auth=AuthSettings(...))`, streamable HTTP at `/mcp`, publishing its
protected resource metadata) on MCP_PORT, and a small OAuth authorization server (its metadata and
a `client_credentials` token endpoint) on AS_PORT. Every request either server receives is
appended to LOG as one JSON line (`server`, `path`, `authorization`, `form`, and `issued`, the
token handed out), so a test can see what the client sent where and which token to look for.
"""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import asyncio
import base64
import json
import secrets
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

ISSUED: set[str] = set()


class Verifier:
    """The SDK's TokenVerifier: a token is valid when this process's authorization server issued it."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token not in ISSUED:
            return None
        return AccessToken(token=token, client_id="wfops", scopes=["tools"])


def logged(name: str, log: Path, inner: Any) -> Any:
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        entry: dict[str, Any] = {"server": name, "path": scope["path"], "method": scope["method"],
                                 "authorization": headers.get("authorization", ""),
                                 "extra": headers.get("x-extra", "")}
        if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            entry["form"] = dict(parse_qsl(body.decode()))
        sent: list[dict[str, Any]] = []

        async def replay() -> dict[str, Any]:
            if sent:
                return await receive()
            sent.append({})
            return {"type": "http.request", "body": body, "more_body": False}

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and name == "as" and scope["path"] == "/token":
                issued = json.loads(message.get("body") or b"{}").get("access_token")
                if issued:
                    write(log, {"server": name, "issued": issued})
            await send(message)

        write(log, entry)  # before the call: the MCP server's event stream stays open
        await inner(scope, replay, capture)
    return asgi


def write(log: Path, entry: dict[str, Any]) -> None:
    with log.open("a") as out:
        out.write(json.dumps(entry) + "\n")


def authorization_server(issuer: str, client_id: str, client_secret: str) -> Any:
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope["path"]
        if path == "/.well-known/oauth-authorization-server":
            await answer(send, 200, {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
                                     "token_endpoint": f"{issuer}/token", "response_types_supported": ["code"],
                                     "grant_types_supported": ["client_credentials"],
                                     "token_endpoint_auth_methods_supported": ["client_secret_basic",
                                                                               "client_secret_post"]})
        elif path == "/token" and scope["method"] == "POST":
            form = dict(parse_qsl(body.decode()))
            given = (form.get("client_id"), form.get("client_secret"))
            basic = headers.get("authorization", "")
            if basic.startswith("Basic "):
                pair = base64.b64decode(basic[6:]).decode().split(":", 1)
                given = (pair[0], pair[1] if len(pair) > 1 else "")
            if form.get("grant_type") != "client_credentials":
                await answer(send, 400, {"error": "unsupported_grant_type"})
            elif given != (client_id, client_secret):
                await answer(send, 401, {"error": "invalid_client", "error_description": "bad client credentials"})
            else:
                token = "at-" + secrets.token_hex(12)
                ISSUED.add(token)
                await answer(send, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                                         "scope": form.get("scope", "tools")})
        else:
            await answer(send, 404, {"error": "not_found"})
    return asgi


async def answer(send: Any, status: int, payload: dict[str, Any]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


async def main() -> None:
    mcp_port, as_port, client_id, client_secret, log = (
        int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], Path(sys.argv[5]))
    issuer = f"http://127.0.0.1:{as_port}"
    app = MCPServer("wfops-test-oauth", token_verifier=Verifier(),
                    auth=AuthSettings(issuer_url=issuer, resource_server_url=f"http://127.0.0.1:{mcp_port}/mcp",
                                      required_scopes=["tools"], validate_token_resource=False))

    @app.tool()
    def whoami(name: str) -> str:
        """Greet `name`: reached only with a token the authorization server issued."""
        return f"hello {name}, you hold a token"

    servers = [
        uvicorn.Server(uvicorn.Config(logged("mcp", log, app.streamable_http_app()), host="127.0.0.1",
                                      port=mcp_port, log_level="error")),
        uvicorn.Server(uvicorn.Config(logged("as", log, authorization_server(issuer, client_id, client_secret)),
                                      host="127.0.0.1", port=as_port, log_level="error")),
    ]
    await asyncio.gather(*(server.serve() for server in servers))


if __name__ == "__main__":
    asyncio.run(main())
