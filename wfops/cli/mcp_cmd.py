"""`wfops mcp`: serve the current project to MCP clients over stdio, or streamable HTTP with
`--http` (see docs/mcp.md)."""

from __future__ import annotations

import os

from wfops.api import Project

# The client that started this process, read before the server's slow imports: if it dies
# while wfops starts up, the server still sees its parent change and leaves.
PARENT = os.getppid()


def run(*, project: str | None, db: str | None, allow_client_sources: bool = False, http: bool = False,
        host: str = "127.0.0.1", port: int = 8000) -> int:
    found = Project(project, db=db)  # no project: one line and exit 2, before any protocol
    found.root  # noqa: B018 - a store alone (--db) is not enough to serve: ProjectNotFound
    # deferred: wfops.mcpserver.app imports mcp (~1.7 s), only once the project is found
    from wfops.mcpserver.app import serve, serve_over_http

    if http:
        serve_over_http(found, host=host, port=port, allow_client_sources=allow_client_sources)
        return 0
    serve(found, allow_client_sources=allow_client_sources, parent=PARENT)
    return 0
