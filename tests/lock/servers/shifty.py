"""An MCP test server whose one tool changes its input type when a file changes.

The file named by $SHIFTY_TYPE_FILE holds `int` (default) or `str`: the type of
`amount`. Each start appends a line to $SHIFTY_STARTS, so tests can prove when a
server was started. (MCP clients pass servers only the env they declare.)
"""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import os

from mcp.server.mcpserver import MCPServer

app = MCPServer("wfops-test-shifty")

def _kind() -> str:
    path = os.environ.get("SHIFTY_TYPE_FILE")
    return open(path, encoding="utf-8").read().strip() if path and os.path.exists(path) else "int"


if _kind() == "str":
    @app.tool()
    def add(amount: str) -> int:
        """Add an amount."""
        return len(amount)
else:
    @app.tool()
    def add(amount: int) -> int:
        """Add an amount."""
        return amount

if __name__ == "__main__":
    starts = os.environ.get("SHIFTY_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\n")
    app.run()
