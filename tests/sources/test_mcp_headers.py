"""`headers:` on a `url:` MCP source: a token from `${...}` reaches an MCP server (written with
the mcp SDK, over streamable HTTP on loopback) that requires it, and nothing shows it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import mcpfork
from tests.conftest import write
from tests.runner.hostile import assert_no_secret
from wfops.api import Project
from wfops.errors import CallFailed, WfopsError

SERVER = Path(__file__).resolve().parent / "servers" / "bearer_mcp.py"
TOKEN = "mcp-bearer-9d3e7a41c0"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    seen = tmp_path_factory.mktemp("bearer") / "seen.txt"
    seen.write_text("")
    # Started as an MCP client starts a server, under the session's basetemp: forked from the zygote.
    process = subprocess.Popen([sys.executable, str(SERVER), str(port), TOKEN, str(seen)], cwd=seen.parent,
                               env=mcpfork.server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a hang guard
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port, seen
    finally:
        process.terminate()
        process.wait(10)


def project(root: Path, port: int) -> Project:
    write(root, {"sources.yaml": textwrap.dedent(f"""\
        sources:
          remote:
            kind: mcp
            url: http://127.0.0.1:{port}/mcp
            headers: {{Authorization: "Bearer ${{REMOTE_TOKEN}}"}}
            timeout: 20
        """)})
    return Project(root, db=root / "runs.db")


@pytest.mark.slow  # starts an MCP server process
def test_a_bearer_token_from_the_environment_reaches_the_server(server: tuple[int, Path], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    port, seen = server
    monkeypatch.setenv("REMOTE_TOKEN", TOKEN)
    made = project(tmp_path, port)
    called = made.call("remote.whoami", {"name": "ana"})
    assert called.output == {"result": "hello ana, you are authorized"}
    assert f"Bearer {TOKEN}" in seen.read_text().splitlines()
    listing = made.capabilities("remote")
    assert [c.ref for c in listing.capabilities] == ["remote.whoami"]
    shown = json.dumps([called.output, [c.__dict__ for c in listing.capabilities]], default=str)
    assert_no_secret(TOKEN, shown, (tmp_path / "sources.yaml").read_text())


@pytest.mark.slow
def test_a_wrong_token_is_refused_and_not_shown(server: tuple[int, Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    port, _ = server
    wrong = "wrong-token-7c1f0b22aa"
    monkeypatch.setenv("REMOTE_TOKEN", wrong)
    with pytest.raises((CallFailed, WfopsError)) as caught:
        project(tmp_path, port).call("remote.whoami", {"name": "ana"})
    assert "mcp source 'remote'" in caught.value.message
    assert_no_secret(wrong, caught.value.message, caught.value.hint or "")


def test_headers_need_a_url(tmp_path: Path) -> None:
    write(tmp_path, {"sources.yaml": "sources:\n  s: {kind: mcp, command: [x], headers: {A: b}}\n"})
    [found] = Project(tmp_path).validate().diagnostics
    assert found.code == "invalid-source" and "`headers` apply only to a `url:` source" in found.message
