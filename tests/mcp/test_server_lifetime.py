"""`wfops mcp` stays responsive and never outlives its client: a capability call that never
ends does not stop other tools, and the server process is gone soon after its client dies,
whether its stdin closes with it or stays open (the parent watcher). Real processes; every
wait is a generous hang guard, not a speed bound."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.harness import WFOPS, process_env, run_cli, wait_for
from tests.mcp.helpers import alive, processes_mentioning, wait_dead
from tests.mcp.projects import std_project

NEVER = {"ref": "std.sleep", "input": {"seconds": 1e308}}

# A client on the raw stdio transport: starts `wfops mcp`, shakes hands, starts a call that
# never ends, writes the server's pid where the test finds it, then waits to be killed.
PARENT = """
import json, os, subprocess, sys, time
argv, pid_file, read_fd, write_fd = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
close_stdin = sys.argv[5] == "close"
own_pipe = read_fd < 0
server = subprocess.Popen(argv, stdin=subprocess.PIPE if own_pipe else read_fd, stdout=subprocess.PIPE,
                          pass_fds=() if own_pipe else (read_fd,))
writer = server.stdin if own_pipe else os.fdopen(write_fd, "wb")
def send(message):
    writer.write((json.dumps(message) + "\\n").encode())
    writer.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
server.stdout.readline()  # the server is serving
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "call_capability", "arguments": NEVER_CALL}})
# A run that never ends, and a wait for it: a worker thread of the server's pool blocks an hour.
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "start_run", "arguments": {"deployment": "sleepy.local"}}})
while (answer := json.loads(server.stdout.readline())).get("id") != 3:
    pass
run_id = answer["result"]["structuredContent"]["run"]["run_id"]
send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
    "name": "wait_run", "arguments": {"run_id": run_id, "timeout": 3600}}})
time.sleep(0.5)
if close_stdin:
    writer.close()  # the client is done, but still alive: only the EOF tells the server
open(pid_file, "w").write(str(server.pid))
time.sleep(3600)
""".replace("NEVER_CALL", json.dumps(NEVER))


SLEEPY = """
name: sleepy
steps:
  - {id: wait, uses: std.sleep, with: {seconds: 1e308}, next: end}
"""


def sleepy_project(root: Path) -> Path:
    """The std project, compiled, plus a deployment whose run never ends."""
    std_project(root)
    (root / "workflows/sleepy.yaml").write_text(SLEEPY)
    (root / "deployments/sleepy.yaml").write_text("name: sleepy.local\nworkflow: sleepy\n")
    assert run_cli("compile", "--project", str(root)).code == 0
    return root


@pytest.mark.slow
def test_a_call_that_never_ends_does_not_stop_other_tools(tmp_path: Path) -> None:
    root = sleepy_project(tmp_path / "p")
    params = StdioServerParameters(command=sys.executable, args=["-m", "wfops", "mcp", "--project", str(root)],
                                   env=process_env(), cwd=str(root))

    async def main() -> None:
        async with Client(params) as client:
            await client.list_tools()
            never = asyncio.create_task(client.call_tool("call_capability", NEVER))
            listed = await client.call_tool("list_project", {}, read_timeout_seconds=60)
            assert not listed.is_error and not never.done()
            started = await client.call_tool("start_run", {"deployment": "hello.local"}, read_timeout_seconds=60)
            assert not started.is_error, started.content
            run_id = started.structured_content["run"]["run_id"]
            waited = await client.call_tool("wait_run", {"run_id": run_id, "timeout": 60}, read_timeout_seconds=90)
            assert waited.structured_content["run"]["status"] == "completed" and not never.done()
            bounded = await client.call_tool("call_capability", {**NEVER, "timeout": 0.2}, read_timeout_seconds=60)
            assert bounded.is_error and bounded.structured_content["error"]["type"] == "CallFailed"
            assert "within 0.2s" in bounded.structured_content["error"]["message"]
            sleepy = await client.call_tool("start_run", {"deployment": "sleepy.local"}, read_timeout_seconds=60)
            waiting = asyncio.create_task(client.call_tool(
                "wait_run", {"run_id": sleepy.structured_content["run"]["run_id"], "timeout": 3600}))
            await asyncio.sleep(0.5)  # both calls are in the server when the client leaves
            servers.extend(processes_mentioning(str(root)))
            never.cancel()
            waiting.cancel()

    servers: list[int] = []
    asyncio.run(main())
    # The client closed the server's stdin with the call still going: the server left anyway.
    assert len(servers) == 1 and wait_dead(servers[0], 30)


def start_parent(tmp_path: Path, pipe: tuple[int, int] = (-1, -1), *,
                 close_stdin: bool = False) -> tuple[subprocess.Popen[bytes], int]:
    """The raw client, once its server is serving and busy with calls that never end; with
    `pipe`, the server's stdin is that pipe, whose write end the test holds too; with
    `close_stdin`, the client then closes the server's stdin and lives on."""
    root = sleepy_project(tmp_path / "p")
    pid_file = tmp_path / "server.pid"
    argv = [*WFOPS, "mcp", "--project", str(root)]
    parent = subprocess.Popen([sys.executable, "-c", PARENT, json.dumps(argv), str(pid_file), *map(str, pipe),
                               "close" if close_stdin else "keep"],
                              env=process_env(), cwd=str(root), pass_fds=tuple(fd for fd in pipe if fd >= 0))
    server = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the server's pid"))
    assert close_stdin or alive(server)
    return parent, server


@pytest.mark.slow
def test_the_server_leaves_when_its_stdin_ends_though_calls_are_going(tmp_path: Path) -> None:
    parent, server = start_parent(tmp_path, close_stdin=True)
    try:
        assert wait_dead(server, 30), "wfops mcp outlived the end of its stdin"
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.slow
def test_the_server_is_gone_soon_after_its_client_is_killed(tmp_path: Path) -> None:
    parent, server = start_parent(tmp_path)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert wait_dead(server, 30), "wfops mcp outlived its client"


@pytest.mark.slow
def test_the_server_is_gone_when_its_parent_dies_though_its_stdin_stays_open(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()  # this test keeps the write end: the server never sees EOF
    try:
        parent, server = start_parent(tmp_path, (read_end, write_end))
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert wait_dead(server, 30), "wfops mcp outlived its parent"
    finally:
        os.close(read_end)
        os.close(write_end)
