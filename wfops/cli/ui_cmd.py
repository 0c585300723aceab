"""`wfops ui`: serve the project and its run store to a browser (see docs/ui.md)."""

from __future__ import annotations

import contextlib

from wfops.api import Project


def run(*, project: str | None, db: str | None, host: str, port: int, read_only: bool, open_browser: bool) -> int:
    found = Project(project, db=db)
    found.root  # noqa: B018 - the pages show the project, not only a store: ProjectNotFound
    # deferred: starlette and uvicorn (~150 ms), only for this verb
    from wfops.ui.serve import ServeOptions, serve

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how the server is meant to stop
        serve(found, ServeOptions(host=host, port=port, read_only=read_only, open_browser=open_browser))
    return 0
