"""`wfops mcp`: serve the current project to MCP clients over stdio (see docs/mcp.md)."""

from __future__ import annotations

from wfops.api import Project


def run(*, project: str | None, db: str | None, allow_client_sources: bool = False) -> int:
    found = Project(project, db=db)  # no project: one line and exit 2, before any protocol
    found.root  # noqa: B018 - a store alone (--db) is not enough to serve: ProjectNotFound
    # deferred: wfops.mcpserver.app imports mcp (~1.7 s), only once the project is found
    from wfops.mcpserver.app import serve

    serve(found, allow_client_sources=allow_client_sources)
    return 0
