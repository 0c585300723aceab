"""Servers that cannot start, exit at once or hang at start-up: clear errors, bounded, nothing left."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import mcpfork
from tests.harness import finishes
from tests.mcp.helpers import (
    STATEFUL,
    Loop,
    ctx,
    read_pid,
    stateful_source,
    wait_dead,
    wait_gone,
)
from wfops.errors import CapabilityError
from wfops.model.sources import McpSource
from wfops.sources.mcp import McpClientSource


def _open_error(source: McpClientSource) -> CapabilityError:
    loop = Loop()
    try:
        with pytest.raises(CapabilityError) as caught:
            loop.run(source.open())
        loop.run(source.close())  # still closable after a failed open
        return caught.value
    finally:
        loop.close()


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    spec = McpSource(kind="mcp", command=["wfops-no-such-server", "--x"])
    err = _open_error(McpClientSource("ghost", spec, tmp_path))
    assert err.message == "mcp source 'ghost': command not found: 'wfops-no-such-server'"
    assert "command:" in (err.hint or "")


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_server_that_exits_at_once_shows_its_stderr(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    err = _open_error(stateful_source(tmp_path, "--pid-file", str(pid_file), "--exit-at-once",
                                      source_id="quitter"))
    assert err.message.startswith("mcp source 'quitter': the server exited before it answered")
    assert "refusing to start (--exit-at-once)" in err.message
    assert wait_dead(read_pid(pid_file))


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_server_that_never_answers_is_bounded_by_the_start_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # The server would answer after an hour: only the start timeout can end open() (the
    # finishes() guard is for a hang, not a speed bound).
    err = finishes(lambda: _open_error(stateful_source(tmp_path, "--pid-file", str(pid_file), "--slow-start",
                                                       "3600", start_timeout=0.5, source_id="sloth")))
    assert "mcp source 'sloth': the server did not start and list its tools within 0.5s" in err.message
    # Under load the server may be stopped before it even wrote its pid: look for it by its argv.
    assert wait_gone(str(pid_file)) == []


def test_a_cwd_that_does_not_exist(tmp_path: Path) -> None:
    err = _open_error(stateful_source(tmp_path, cwd="missing", source_id="lost"))
    assert "mcp source 'lost': cwd" in err.message and "not a directory" in err.message


def test_capabilities_before_open_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CapabilityError, match="not open"):
        stateful_source(tmp_path).capabilities()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # starts its own MCP server process(es)
def test_streamable_http_url(tmp_path: Path) -> None:
    port = _free_port()
    # Started as an MCP client starts a server, under the session's basetemp: forked from the zygote.
    server = subprocess.Popen([sys.executable, STATEFUL, "--http", str(port)], cwd=tmp_path,
                              env=mcpfork.server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    loop = Loop()
    try:
        deadline = time.monotonic() + 60  # a hang guard
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        source = McpClientSource("remote", McpSource(kind="mcp", url=f"http://127.0.0.1:{port}/mcp"),
                                 tmp_path)
        loop.run(source.open())
        values = [loop.run(source.call("counter", {}, ctx())).output["value"] for _ in range(3)]
        assert values == [1, 2, 3]
        loop.run(source.close())
    finally:
        loop.close()
        server.terminate()
        server.wait(10)


def test_an_unreachable_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    err = _open_error(McpClientSource("remote", McpSource(kind="mcp", url=url), tmp_path,
                                      start_timeout=3))
    assert err.message.startswith(f"mcp source 'remote': cannot connect to {url}")


@pytest.mark.slow  # starts its own MCP server process(es)
def test_cancelling_open_stops_the_starting_server(tmp_path: Path) -> None:
    import asyncio

    pid_file = tmp_path / "pid"
    # It would answer after an hour, and open() would wait that long: only the cancel ends it.
    source = stateful_source(tmp_path, "--pid-file", str(pid_file), "--slow-start", "3600", start_timeout=3600)

    async def start_then_give_up() -> None:
        opening = asyncio.ensure_future(source.open())
        for _ in range(400):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.025)
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening

    def scenario() -> None:
        loop = Loop()
        try:
            loop.run(start_then_give_up())
            assert wait_dead(read_pid(pid_file))
            loop.run(source.close())
        finally:
            loop.close()

    finishes(scenario)


def test_a_command_that_is_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    err = _open_error(McpClientSource("noexec", McpSource(kind="mcp", command=[str(script)]), tmp_path))
    assert err.message.startswith("mcp source 'noexec': could not start the server: ")
    assert "Permission denied" in err.message
