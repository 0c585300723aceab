"""`wfops mcp --http`: the same tools over streamable HTTP, driven by the SDK's real client; a
bearer token when one is set (and required for a host the network can reach); a foreign Origin
refused."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import process_env, run_cli, wait_for
from tests.mcp.projects import std_project
from wfops.mcpserver import remote

TOKEN = "test-token-0123456789abcdef"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_a_host_the_network_reaches_needs_a_token(tmp_path: Path) -> None:
    assert remote.is_loopback("127.0.0.1") and remote.is_loopback("::1") and remote.is_loopback("localhost")
    assert not remote.is_loopback("0.0.0.0") and not remote.is_loopback("192.0.2.1")
    assert remote.token_for("127.0.0.1", {}) is None
    assert remote.token_for("192.0.2.1", {remote.TOKEN_ENV: TOKEN}) == TOKEN
    done = run_cli("mcp", "--http", "--host", "192.0.2.1", "--project", str(std_project(tmp_path)),
                   env={remote.TOKEN_ENV: None})
    assert done.returncode == 2 and "WFOPS_MCP_TOKEN is not set" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serving(root: Path, port: int, token: str | None, errlog: Path) -> subprocess.Popen[bytes]:
    env = process_env({remote.TOKEN_ENV: token})
    proc = subprocess.Popen([sys.executable, "-m", "wfops", "mcp", "--http", "--port", str(port),
                             "--project", str(root)], env=env, stdout=subprocess.DEVNULL, stderr=errlog.open("w"))

    def up() -> bool:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=2)
        except httpx2.TransportError:
            assert proc.poll() is None, errlog.read_text()
            return False
        return True
    wait_for(up, what="the HTTP server to listen", timeout=120)
    return proc


def call_tools(url: str, headers: dict[str, str]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            listed = await client.call_tool("list_project", {})
            ran = await client.call_tool("run_deployment", {"deployment": "hello.local"})
            return {"names": names, "listed": listed.structured_content, "ran": ran.structured_content}
    return asyncio.run(main())


@pytest.mark.slow  # a real server process on 127.0.0.1
def test_streamable_http_with_and_without_the_token(tmp_path: Path) -> None:
    root = std_project(tmp_path / "proj")
    assert run_cli("compile", "--project", str(root)).returncode == 0
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = serving(root, port, TOKEN, tmp_path / "server.err")
    try:
        assert httpx2.post(url, json=INIT, headers=HEADERS, timeout=30).status_code == 401
        wrong = {**HEADERS, "authorization": "Bearer nope"}
        assert httpx2.post(url, json=INIT, headers=wrong, timeout=30).status_code == 401
        good = {"authorization": f"Bearer {TOKEN}"}
        foreign = httpx2.post(url, json=INIT, headers={**HEADERS, **good, "origin": "http://evil.example"}, timeout=30)
        assert foreign.status_code == 403
        done = call_tools(url, good)
        assert "fork_run" in done["names"] and "search_docs" in done["names"]
        assert done["listed"]["ok"] is True and done["listed"]["workflows"][0]["name"] == "ask"
        assert done["ran"]["run"]["state"] == "completed"
    finally:
        proc.terminate()
        proc.wait(timeout=60)

    port = free_port()
    proc = serving(root, port, None, tmp_path / "server2.err")  # loopback, no token set: none needed
    try:
        done = call_tools(f"http://127.0.0.1:{port}/mcp", {})
        assert done["listed"]["ok"] is True
        local = httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INIT,
                            headers={**HEADERS, "origin": f"http://localhost:{port}"}, timeout=30)
        assert local.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=60)
