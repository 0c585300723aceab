"""An MCP test server whose tools declare annotations: one destructive, one read-only.

Run as `python tests/mcp/servers/annotated.py` (stdio).
"""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

app = MCPServer("wfops-test-annotated")


@app.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def wipe(table: str) -> str:
    return f"wiped {table}"


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek(table: str) -> str:
    return f"{table}: 0 rows"


if __name__ == "__main__":
    app.run()
