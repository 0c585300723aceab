"""An MCP test server that prints the token it was given ($MCP_TOKEN) to stderr and dies:
at start when $LEAKY_MODE is `start`, else in its `leak` tool, mid-call; with `stdout` it
prints the token to its stdout (not JSON-RPC) and serves on. What wfops quotes of either
stream must show the token masked."""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def die() -> None:
    sys.stderr.write(f"dying with {os.environ.get('MCP_TOKEN', '')}\n")
    sys.stderr.flush()
    os._exit(3)


app = MCPServer("wfops-test-leaky")


@app.tool()
def leak(text: str = "") -> str:
    """Print the token to stderr and exit before answering."""
    die()
    return text


@app.tool()
def refuse() -> str:
    """Fail with an error text that quotes the token."""
    raise ToolError(f"denied: dying with {os.environ.get('MCP_TOKEN', '')}")


if __name__ == "__main__":
    if os.environ.get("LEAKY_MODE") == "start":
        die()
    if os.environ.get("LEAKY_MODE") == "stdout":  # a line that is not JSON-RPC, on the protocol's stream
        print(f"logged in with {os.environ.get('MCP_TOKEN', '')}", flush=True)
    app.run()
