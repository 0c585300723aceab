"""`auth: {kind: client_credentials}` on a `url:` MCP source: against a real MCP server (the SDK's
resource server, streamable HTTP on loopback) and a real OAuth authorization server on another
origin, wfops gets a token with the client's id and `${...}` secret and calls the tool through
`wfops run`; the token and the secret are found nowhere wfops writes or shows, the secret goes only
to the named issuer, and a wrong secret is one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import mcpfork
from tests.conftest import write
from tests.harness import WFOPS, CliResult, process_env, run_cli
from tests.runner.hostile import assert_no_secret
from wfops.api import Project
from wfops.errors import WfopsError

SERVER = Path(__file__).resolve().parent / "servers" / "oauth_mcp.py"
CLIENT_ID = "wfops-ci"
SECRET = "cs-4f1e9a7b2d-secret"
EXTRA = "extra-header-61c0"

WORKFLOW = """\
name: greet
version: 1
input: {type: object, required: [name], properties: {name: {type: string}}}
state:
  said: {type: string}
output: {said: $state.said}
steps:
  - id: hello
    uses: remote.whoami
    with: {name: $input.name}
    save: {result: state.said}
    next: end
"""


@dataclass
class Servers:
    mcp_port: int
    as_port: int
    log: Path

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.as_port}"

    def seen(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def issued(self) -> list[str]:
        return [entry["issued"] for entry in self.seen() if "issued" in entry]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    running = Servers(free_port(), free_port(), tmp_path_factory.mktemp("oauth") / "seen.jsonl")
    running.log.write_text("")
    process = subprocess.Popen([sys.executable, str(SERVER), str(running.mcp_port), str(running.as_port),
                                CLIENT_ID, SECRET, str(running.log)], cwd=running.log.parent,
                               # Started as an MCP client starts a server, under the session's basetemp: forked from the zygote.
                               env=mcpfork.server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a hang guard
        for port in (running.mcp_port, running.as_port):
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
        yield running
    finally:
        process.terminate()
        process.wait(10)


def sources(servers: Servers, issuer: str | None = None) -> str:
    return textwrap.dedent(f"""\
        sources:
          remote:
            kind: mcp
            url: http://127.0.0.1:{servers.mcp_port}/mcp
            headers: {{X-Extra: "{EXTRA}"}}
            timeout: 20
            auth:
              kind: client_credentials
              issuer: {issuer or servers.issuer}
              client_id: {CLIENT_ID}
              client_secret: "${{REMOTE_SECRET}}"
              scope: tools
        """)


def make(root: Path, servers: Servers, issuer: str | None = None) -> Path:
    return write(root, {"sources.yaml": sources(servers, issuer), "workflows/greet.yaml": WORKFLOW,
                        "deployments/greet.local.yaml": "name: greet.local\nworkflow: greet\n"
                        "input: {name: ana}\nsecrets: [REMOTE_SECRET]\n"})


def wfops(root: Path, *args: str, secret: str = SECRET) -> CliResult:
    """`wfops ARGS` in process, the secret in its environment."""
    return run_cli(*args, cwd=root, env={"REMOTE_SECRET": secret})


def wfops_process(root: Path, *args: str, secret: str = SECRET) -> subprocess.CompletedProcess[str]:
    """`wfops ARGS` as a real process, the secret in its environment."""
    return subprocess.run([*WFOPS, *args], cwd=root, env=process_env({"REMOTE_SECRET": secret}),
                          capture_output=True, text=True, timeout=120, check=False)


def everything_written(root: Path) -> list[bytes]:
    """Every file under the project (the store and its WAL, the lock, caches)."""
    return [path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()]


@pytest.mark.slow  # starts the MCP and authorization servers
def test_a_workflow_calls_a_tool_with_a_token_from_client_credentials(servers: Servers, tmp_path: Path) -> None:
    root = make(tmp_path / "p", servers)
    before = len(servers.seen())

    compiled = wfops(root, "compile")
    assert compiled.returncode == 0, compiled.stderr
    listed = wfops(root, "caps", "list", "--source", "remote")
    assert listed.returncode == 0 and "remote.whoami" in listed.stdout, listed.stderr
    checked = wfops(root, "check", "--live")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = wfops_process(root, "run", "greet.local", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["output"] == {"said": "hello ana, you hold a token"}
    trace = wfops(root, "runs", "trace", json.loads(ran.stdout)["run_id"], "--json")
    assert trace.returncode == 0, trace.stderr

    seen = servers.seen()[before:]
    tokens = [entry["issued"] for entry in seen if "issued" in entry]
    assert tokens, "no token was issued"
    requests = [entry for entry in seen if "path" in entry]
    # The secret went to the token endpoint of the named issuer, and the MCP server only ever saw bearer tokens.
    token_requests = [entry for entry in requests if entry["path"] == "/token"]
    assert token_requests and all(entry["server"] == "as" for entry in token_requests)
    assert all(entry["form"]["grant_type"] == "client_credentials" for entry in token_requests)
    assert {entry["authorization"].split(" ")[0] for entry in requests if entry["server"] == "mcp"} <= {"", "Bearer"}
    assert any(entry["authorization"] == f"Bearer {tokens[0]}" for entry in requests if entry["server"] == "mcp")
    # `headers:` go to the MCP server's origin only, never to the authorization server.
    assert {entry["extra"] for entry in requests if entry["server"] == "as"} == {""}
    assert {entry["extra"] for entry in requests if entry["server"] == "mcp"} == {EXTRA}

    shown = "".join(done.stdout + done.stderr for done in (compiled, listed, checked, ran, trace))
    for token in tokens:
        assert_no_secret(token, shown)
        assert all(token.encode() not in data for data in everything_written(root))
    assert_no_secret(SECRET, shown, (root / "sources.yaml").read_text())
    assert all(SECRET.encode() not in data for data in everything_written(root))


@pytest.mark.slow
def test_a_wrong_client_secret_is_one_line_and_never_shown(servers: Servers, tmp_path: Path) -> None:
    root = make(tmp_path / "p", servers)
    wrong = "cs-wrong-0b7e55d1"
    ran = wfops(root, "caps", "list", "--source", "remote", secret=wrong)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    first = ran.stderr.splitlines()[0]
    assert first.startswith("wfops: error: mcp source 'remote': OAuth with " + servers.issuer), ran.stderr
    assert "refused the client credentials (401 invalid_client: bad client credentials)" in first
    assert "Traceback" not in ran.stderr
    assert "REMOTE_SECRET" in ran.stderr  # the hint names the variable, not its value
    assert_no_secret(wrong, ran.stdout, ran.stderr)

    assert wfops(root, "compile").returncode == 0  # with the right secret: a run then opens the source
    made = wfops(root, "run", "greet.local", secret=wrong)
    assert made.returncode == 2, made.stdout + made.stderr  # refused: a source that cannot start
    assert made.stderr.startswith("wfops: error: source 'remote' could not be started: mcp source 'remote': "
                                  "OAuth with "), made.stderr
    assert "refused the client credentials" in made.stderr
    assert "Traceback" not in made.stderr
    assert_no_secret(wrong, made.stdout, made.stderr, *(data.decode("latin-1") for data in everything_written(root)))


@pytest.mark.slow
def test_the_secret_goes_to_no_authorization_server_but_the_named_issuer(servers: Servers, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The MCP server's metadata names the authorization server on as_port; the project names another.
    elsewhere = f"http://127.0.0.1:{free_port()}"
    root = make(tmp_path / "p", servers, issuer=elsewhere)
    before = len(servers.seen())
    monkeypatch.setenv("REMOTE_SECRET", SECRET)
    with pytest.raises(WfopsError) as caught:
        Project(root).capabilities("remote")
    seen = servers.seen()[before:]
    assert seen and not [entry for entry in seen if entry.get("server") == "as"], seen
    talks_to = ", ".join(sorted([elsewhere, f"http://127.0.0.1:{servers.mcp_port}"]))  # the message sorts them
    assert caught.value.message == (f"mcp source 'remote': refused to send a request to {servers.issuer}: the "
                                    f"source talks only to {talks_to}")


def test_a_client_secret_written_inline_is_refused_at_its_position(tmp_path: Path) -> None:
    write(tmp_path, {"sources.yaml": textwrap.dedent("""\
        sources:
          remote:
            kind: mcp
            url: http://127.0.0.1:9/mcp
            auth:
              kind: client_credentials
              issuer: http://127.0.0.1:8
              client_id: ci
              client_secret: hunter2-literal
        """)})
    [found] = Project(tmp_path).validate().diagnostics
    assert (found.code, found.line, found.column) == ("invalid-source", 9, 22)
    assert "`client_secret` must be a `${NAME}` reference" in found.message


@pytest.mark.parametrize(("auth", "code", "says"), [
    ("{kind: password, issuer: 'http://a', client_id: c, client_secret: '${S}'}", "invalid-value",
     '"password" is not allowed; expected "client_credentials"'),
    ("{kind: client_credentials, client_id: c, client_secret: '${S}'}", "missing-key", "`issuer` is required"),
    ("{kind: client_credentials, issuer: 'http://a', client_id: c, client_secret: '${S}', secret: x}",
     "unknown-key", "unknown key `secret`"),
    ("{kind: client_credentials, issuer: 'ftp://a', client_id: c, client_secret: '${S}'}", "invalid-value", "issuer"),
])
def test_a_wrong_auth_is_a_diagnostic(tmp_path: Path, auth: str, code: str, says: str) -> None:
    write(tmp_path, {"sources.yaml": f"sources:\n  r:\n    kind: mcp\n    url: http://127.0.0.1:9/mcp\n"
                                     f"    auth: {auth}\n"})
    [found] = Project(tmp_path).validate().diagnostics
    assert (found.code, found.line) == (code, 5) and says in found.message, found


@pytest.mark.parametrize(("extra", "says"), [
    ("command: [x]", "`auth` applies only to a `url:` source"),
    ("url: http://127.0.0.1:9/mcp\n    headers: {authorization: 'Bearer ${T}'}",
     "`headers` cannot set `Authorization` when `auth` obtains the token"),
])
def test_auth_needs_a_url_and_owns_the_authorization_header(tmp_path: Path, extra: str, says: str) -> None:
    write(tmp_path, {"sources.yaml": f"sources:\n  r:\n    kind: mcp\n    {extra}\n    auth: {{kind: client_credentials, "
                                     "issuer: 'http://a', client_id: c, client_secret: '${S}'}\n"})
    [found] = Project(tmp_path).validate().diagnostics
    assert found.code == "invalid-source" and says in found.message, found
