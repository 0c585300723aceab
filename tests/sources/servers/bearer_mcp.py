"""An MCP server over streamable HTTP that requires `Authorization: Bearer <token>`.

Run as `python tests/sources/servers/bearer_mcp.py PORT TOKEN SEEN_FILE`: a request without the
token gets 401 before the MCP app sees it; every request's Authorization header is appended to
SEEN_FILE (one line each) so a test can see what the client sent.
"""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

app = MCPServer("wfops-test-bearer")


@app.tool()
def whoami(name: str) -> str:
    """Greet `name`: reached only with the right token."""
    return f"hello {name}, you are authorized"


def guarded(inner: Any, token: str, seen: Path) -> Any:
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            given = headers.get("authorization", "")
            with seen.open("a") as out:
                out.write(given + "\n")
            if given != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": b'{"error": "unauthorized"}'})
                return
        await inner(scope, receive, send)
    return asgi


def main() -> None:
    port, token, seen = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uvicorn.run(guarded(app.streamable_http_app(), token, seen), host="127.0.0.1", port=port, log_level="error")


if __name__ == "__main__":
    main()
