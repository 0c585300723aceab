"""Every JSON-RPC line gets an answer: hostile, malformed and oversized messages are answered
with a JSON-RPC error carrying their id, over the raw stdio of a real `wfops mcp` process,
and the session goes on serving."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness import process_env
from tests.mcp.projects import std_project
from wfops.mcpserver import wire

HOSTILE = {  # name -> (the line, the id it carries, the error code)
    "a 5,000-digit integer": ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_runs",'
                              '"arguments":{"limit":' + "9" * 5000 + "}}}", 2, -32700),
    "a lone surrogate escape": ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file",'
                                '"arguments":{"path":"\\ud800"}}}', 3, -32700),
    "5,000-deep nesting": ('{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"validate",'
                           '"arguments":{"paths":' + "[" * 5000 + "]" * 5000 + "}}}", "deep", -32600),
    "not JSON": ("not json at all", None, -32700),
    "not JSON-RPC": ('{"jsonrpc":"1.0","id":5,"method":"tools/list"}', 5, -32600),
    "a 5,000-digit id": ('{"jsonrpc":"2.0","id":' + "1" * 5000 + ',"method":"tools/list"}', None, -32700),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_line_is_refused_with_its_id(name: str) -> None:
    line, request_id, code = HOSTILE[name]
    error = wire.refusal(line.encode() + b"\n")
    assert error is not None and error.id == request_id and error.error.code == code
    assert error.error.message


def test_a_plain_request_passes_and_nesting_inside_strings_is_not_counted() -> None:
    assert wire.refusal(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n') is None
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "write_file", "arguments": {"text": "[" * 5000}}})
    assert wire.refusal(text.encode()) is None


class Raw:
    """A real `wfops mcp` process spoken to line by line, as the protocol is on the wire."""

    def __init__(self, root: Path, errlog: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "wfops", "mcp", "--project", str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog.open("w"),
                                     env=process_env())

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() if isinstance(line, str) else line)
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()

    def answer(self, guard: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], guard)
        assert ready, f"no answer within {guard} s"
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.mark.slow  # a real server process and its raw stdio
def test_the_server_answers_every_hostile_request_and_keeps_serving(tmp_path: Path) -> None:
    raw = Raw(std_project(tmp_path / "proj"), tmp_path / "server.err")
    try:
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        assert raw.answer(60)["id"] == 1  # start-up is slow on a busy machine; not what is measured
        raw.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for name, (line, request_id, code) in HOSTILE.items():
            raw.send(line)
            got = raw.answer(30)  # a hang guard: what is tested is an answer, never silence
            assert (got["id"], got["error"]["code"]) == (request_id, code), name
        raw.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","pad":"' + b"x" * (wire.MAX_LINE + 10) + b'"}')
        too_large = raw.answer(30)
        assert too_large["error"]["code"] == -32600 and "larger than" in too_large["error"]["message"]
        raw.send('{"jsonrpc":"2.0","id":8,"method":"tools/list"}')
        assert "tools" in raw.answer(30)["result"]  # still serving
    finally:
        raw.close()
