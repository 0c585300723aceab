"""Hostile values through `wfops mcp` (a real subprocess over stdio, slow): each is an error
result or a failed run, and the server keeps answering every later request. Afterwards the
store holds only valid JSON, no run is `running`, and no form of the secret was sent."""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import LATEST_PROTOCOL_VERSION

from tests.harness import process_env, run_cli
from tests.runner.helpers import env_for
from tests.runner.hostile import (
    EVIL_TEXT,
    PEM,
    assert_no_secret,
    assert_store_sound,
    make_hostile_project,
)


@pytest.mark.slow
def test_the_server_answers_hostile_values_with_errors_and_keeps_serving(tmp_path: Path) -> None:
    root = make_hostile_project(tmp_path / "p")
    assert run_cli("compile", "--project", str(root), cwd=root, env=env_for()).returncode == 0
    db = tmp_path / "runs.db"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "wfops", "mcp", "--project", str(root), "--db", str(db)],
                                   env=process_env(env_for(KEY=PEM)), cwd=str(root))
    sent: list[str] = []

    async def session() -> None:
        async with Client(stdio_client(params, errlog=(tmp_path / "server.err").open("w"))) as client:
            async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
                result = (await client.call_tool(tool, args)).structured_content
                assert result is not None
                sent.append(json.dumps(result, ensure_ascii=False))
                # After every request, however hostile: the server still answers.
                listed = (await client.call_tool("list_capabilities", {})).structured_content
                assert listed is not None and listed["ok"] is True
                return result

            # Exceptions from nodes: a failed call each, never the end of the server.
            for kind, type_, said in (("keyboard", "KeyboardInterrupt", "KeyboardInterrupt"),
                                      ("exit", "SystemExit", "sys.exit(7)"), ("broken-str", "BrokenStr", "BrokenStr"),
                                      ("plain", "ValueError", "ValueError")):
                failed = await call("call_capability", {"ref": "ops.boom", "input": {"kind": kind}})
                assert failed["ok"] is False and failed["error"]["type"] == "CallFailed", failed
                assert said in failed["error"]["message"]
                ran = await call("run_deployment", {"deployment": "boom.local", "input": {"kind": kind}})
                assert ran["run"]["status"] == "failed" and ran["run"]["error"]["type"] == type_

            # Numbers: a node's non-finite output fails the call and the run's step.
            failed = await call("call_capability", {"ref": "ops.emit", "input": {"kind": "nan"}})
            assert failed["ok"] is False and "is not a JSON number" in failed["error"]["message"]
            ran = await call("run_deployment", {"deployment": "emit.local", "input": {"kind": "big"}})
            assert ran["run"]["error"]["type"] == "InvalidOutput"
            ran = await call("run_deployment", {"deployment": "add.local", "input": {"a": 1.7e308, "b": 1.7e308}})
            assert ran["run"]["status"] == "failed" and "add overflows" in ran["run"]["error"]["message"]

            # Resume: a payload the save would reject is refused; the run still waits.
            waiting = await call("run_deployment", {"deployment": "ask.local"})
            run_id = waiting["run"]["run_id"]
            refused = await call("resume_run", {"run_id": run_id, "outcome": "approved", "payload": {"by": 5}})
            assert (refused["ok"], refused["exit_code"]) == (False, 2)
            assert "payload cannot be saved" in refused["error"]["message"]
            shown = await call("show_run", {"run_id": run_id})
            assert shown["run"]["status"] == "interrupted"
            done = await call("resume_run", {"run_id": run_id, "outcome": "approved", "payload": {"by": "ann"}})
            assert done["run"]["status"] == "completed"

            # Bounded time: a backtracking pattern on an argument ends in an error.
            refused = await call("run_deployment", {"deployment": "guarded.local", "input": {"name": EVIL_TEXT}})
            assert refused["ok"] is False and "took longer than" in refused["error"]["message"]

            # Secrets: the messages quoting the PEM key show no form of it, in any tool.
            for deployment in ("secret_save", "secret_child"):
                ran = await call("run_deployment", {"deployment": f"{deployment}.local"})
                assert ran["run"]["status"] == "failed" and "***" in ran["run"]["error"]["message"]
                await call("show_run", {"run_id": ran["run"]["run_id"]})
                await call("read_trace", {"run_id": ran["run"]["run_id"]})
            await call("list_runs", {})

    asyncio.run(asyncio.wait_for(session(), 180))
    assert_no_secret(PEM, *sent)
    assert_store_sound(db, secret=PEM)



class Wire:
    """JSON-RPC lines to and from a `wfops mcp` process, each read under a hang guard."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, message: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(message + b"\n")
        self.proc.stdin.flush()

    def replies_until(self, last_id: int, guard: float = 60) -> dict[int, dict[str, Any]]:
        """Every reply (by id) up to and including the one to `last_id`; notifications skipped."""
        assert self.proc.stdout is not None
        replies: dict[int, dict[str, Any]] = {}
        while last_id not in replies:
            ready, _, _ = select.select([self.proc.stdout], [], [], guard)
            assert ready, f"no answer to request {last_id} within {guard} s"
            line = self.proc.stdout.readline()
            assert line, "the server closed its stdout"
            reply = json.loads(line)
            if reply.get("id") is not None:
                replies[reply["id"]] = reply
        return replies


def _run_call(id_: int, kind: bytes) -> bytes:
    return (b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "run_deployment", '
            b'"arguments": {"deployment": "emit.local", "input": {"kind": "%s"}}}}' % (id_, kind))


@pytest.mark.slow
def test_text_that_is_not_unicode_on_the_wire_never_stops_the_server(tmp_path: Path) -> None:
    """What the SDK client cannot send (its encoder refuses lone surrogates), written raw: a
    `\\ud800` escape and a byte that is not UTF-8. The transport may drop such a message or
    replace the byte; a tool that gets the text refuses it as a usage error. Either way the
    next request is answered and nothing but valid JSON is stored."""
    root = make_hostile_project(tmp_path / "p")
    assert run_cli("compile", "--project", str(root), cwd=root, env=env_for()).returncode == 0
    db = tmp_path / "runs.db"
    proc = subprocess.Popen([sys.executable, "-m", "wfops", "mcp", "--project", str(root), "--db", str(db)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=process_env(env_for()), cwd=root)
    wire = Wire(proc)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}}
        wire.send(json.dumps(init).encode())
        assert "result" in wire.replies_until(0)[0]
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for bad_id, kind in ((1, b"a\\ud800"), (3, b"caf\xe9")):
            wire.send(_run_call(bad_id, kind))
            wire.send(_run_call(bad_id + 1, b"ok"))
            replies = wire.replies_until(bad_id + 1)
            assert replies[bad_id + 1]["result"]["structuredContent"]["run"]["status"] == "completed"
            bad = replies.get(bad_id)
            assert bad is None or "internal error" not in json.dumps(bad), bad
            result = (bad or {}).get("result", {}).get("structuredContent")
            if result is not None and result["run"] is None:  # the text reached the tool: refused
                assert (result["ok"], result["exit_code"]) == (False, 2), result
                assert "not valid Unicode" in result["error"]["message"]
            elif result is not None:  # the transport replaced the byte (U+FFFD): an ordinary value
                assert result["run"]["status"] in ("completed", "failed")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    statuses = assert_store_sound(db)
    assert statuses.count("completed") >= 2 and set(statuses) <= {"completed", "failed"}
