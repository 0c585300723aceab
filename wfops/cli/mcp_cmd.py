"""`wfops mcp`: serve the current project to MCP clients over stdio (see docs/mcp.md)."""

from __future__ import annotations


def run(*, project: str | None, db: str | None) -> int:
    from wfops.loader.project import find_root

    root = find_root(explicit=project)  # no project: one line and exit 2, before any protocol
    from wfops.mcpserver.app import serve
    from wfops.mcpserver.operations import ServerOptions

    serve(ServerOptions(root=root, db=db))
    return 0
