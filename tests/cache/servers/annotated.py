"""An MCP test server whose tools carry annotations: `wipe` destructive, `lookup` read-only,
`plain` none. Each call appends a line to the file named by its first argument (the
side-effect counter): `python annotated.py LOG`."""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import json
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("wfops-test-annotated")


def _log(name: str, text: str) -> None:
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a", encoding="utf-8") as f:
            f.write(json.dumps({"node": name, "text": text}) + "\n")


@app.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
def wipe(text: str) -> str:
    """Pretend to delete something."""
    _log("wipe", text)
    return text


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(text: str) -> str:
    """Read something."""
    _log("lookup", text)
    return text.upper()


@app.tool()
def plain(text: str) -> str:
    """Says nothing about its effects."""
    _log("plain", text)
    return text


if __name__ == "__main__":
    app.run()
