"""Start the UI: check where it may listen, bind, print the address, serve until Ctrl-C."""

from __future__ import annotations

import socket
import sys
import webbrowser
from dataclasses import dataclass

import uvicorn

from wfops.api import Project
from wfops.errors import UsageError
from wfops.ui.app import UiOptions, build_app
from wfops.ui.guard import Access


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    read_only: bool = False
    open_browser: bool = False


def serve(project: Project, options: ServeOptions) -> None:
    """Serve `project` until interrupted. Refuses (UsageError) a non-loopback host without
    a token, and a port it cannot bind."""
    access = Access.for_host(options.host)
    app = build_app(project, access, UiOptions(read_only=options.read_only))
    family = socket.AF_INET6 if ":" in options.host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host.strip("[]"), options.port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
                         hint="pick another --port (0: any free one)") from None
    sock.listen(128)  # before the address is printed: a client that reads it can connect at once
    port = sock.getsockname()[1]
    shown = f"[{options.host.strip('[]')}]" if family == socket.AF_INET6 else options.host
    url = f"http://{shown}:{port}/"
    # The address is the one line a script (or a test) waits for: printed once we listen.
    sys.stdout.write(f"wfops ui: serving {project.root} at {url}"
                     f"{' (read-only)' if options.read_only else ''}; Ctrl-C stops it\n")
    sys.stdout.flush()
    if options.open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
