"""A small stateful MCP test server: counter, echo, an erroring, a hanging and dying tools.

Run as `python tests/mcp/servers/stateful.py [--pid-file F] [--http PORT]`. The pid
file lets tests prove that no server process outlives its source.
"""

from __future__ import annotations

# ruff: noqa: E402 - the fork comes before the imports
import importlib.util as _fork  # first of all: a fork of the test session's MCP zygote, if any (tests/mcpfork.py)

_spec = _fork.spec_from_file_location("mcpfork.stub", __file__.rpartition("/")[0] + "/../../mcpfork.py")
_spec.loader.exec_module(_fork.module_from_spec(_spec))

import argparse
import os
import signal
import time
from pathlib import Path
from typing import TypedDict

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("wfops-test-stateful")
_count = 0


class Count(TypedDict):
    value: int
    pid: int


@app.tool()
def counter(step: int = 1) -> Count:
    """Add `step` to a counter that lives as long as the server process."""
    global _count
    _count += step
    return {"value": _count, "pid": os.getpid()}


@app.tool()
def echo(text: str) -> str:
    """Return `text` unchanged (a primitive return: output is {result: text})."""
    return text


@app.tool(structured_output=False)
def echo_json(text: str) -> str:
    """Return `text` as plain text content with no output schema."""
    return text


@app.tool()
def fail(message: str) -> str:
    """Always fail with `message`."""
    raise ToolError(message)


@app.tool()
async def hang(seconds: float = 3600) -> str:
    """Sleep a long time (tests timeouts)."""
    await anyio.sleep(seconds)
    return "woke"


@app.tool()
def die() -> str:
    """Kill this server process mid-call."""
    os._exit(3)


@app.tool()
def die_once(marker: str) -> str:
    """Kill this server process (SIGKILL) the first time, when the file `marker` does not exist
    yet; answer 'alive' afterwards. A retry after a crash meets a restarted server."""
    path = Path(marker)
    if not path.exists():
        path.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return "alive"


@app.tool()
def env(name: str) -> str:
    """Read an environment variable of the server process ('' when unset)."""
    return os.environ.get(name, "")


@app.tool()
def context(ctx: Context) -> dict:
    """The `wfops/context` the client sent in the request's `_meta`."""
    meta = ctx.request_context.meta or {}
    return dict(meta.get("wfops/context") or {})


@app.tool()
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


@app.tool()
async def chatty(ctx: Context, name: str, lines: int = 2, pause: float = 0, secret_env: str = "") -> str:
    """Send `lines` log notifications (and a progress message) while working on `name`; with
    `secret_env`, one of them quotes that environment variable of the server. `pause` seconds
    pass between the lines, so concurrent calls overlap."""
    await ctx.report_progress(0, lines, message=f"starting {name}")
    for i in range(lines):
        await ctx.info(f"{name}: line {i}")
        if pause:
            await anyio.sleep(pause)
    if secret_env:
        await ctx.warning(f"{name}: the token is {os.environ.get(secret_env, 'unset')}")
    await ctx.debug(f"{name}: debug detail")
    return f"done {name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid-file")
    parser.add_argument("--http", type=int)
    parser.add_argument("--exit-at-once", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0)
    args = parser.parse_args()
    if args.pid_file:
        Path(args.pid_file).write_text(str(os.getpid()))
    if args.exit_at_once:
        raise SystemExit("stateful test server: refusing to start (--exit-at-once)")
    if args.slow_start:
        time.sleep(args.slow_start)
    if args.http:
        app.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        app.run()


if __name__ == "__main__":
    main()
