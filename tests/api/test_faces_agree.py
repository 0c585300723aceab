"""Each rule of the core holds identically through the API, the CLI and the MCP server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import wfops
from wfops.cli.main import main
from wfops.errors import CallFailed, UsageError
from wfops.mcpserver.app import build_server


@contextmanager
def _cwd(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def cli(root: Path, *args: str, capsys: Any) -> tuple[int, str, str]:
    with _cwd(root):
        try:
            main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def mcp(root: Path, tool: str, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(build_server(wfops.Project(root))) as client:
            result = await client.call_tool(tool, arguments)
            return dict(result.structured_content or {})

    return asyncio.run(go())


def raw_mcp_call(root: Path, tool: str, arguments_json: str) -> dict[str, Any]:
    """One tools/call to a real `wfops mcp` process, its arguments written as raw JSON text."""
    messages = [
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", '
        '"capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}',
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": ' + json.dumps(tool)
        + ', "arguments": ' + arguments_json + "}}",
    ]
    proc = subprocess.Popen([sys.executable, "-m", "wfops", "mcp", "--project", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in messages:
            proc.stdin.write(message + "\n")
            proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed without answering"
            reply = json.loads(line)
            if reply.get("id") == 2:
                return dict(reply["result"]["structuredContent"])
    finally:
        proc.kill()
        proc.wait()


def test_a_bad_node_output_fails_call_run_and_mcp_alike(root: Path, tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(CallFailed) as info:
        wfops.Project(root).call("calc.liar", {"n": 1})
    api_error = info.value.error
    run = wfops.Project(root).run("lies.local")
    assert run.error is not None and run.error["type"] == api_error["type"] == "InvalidOutput"

    (tmp_path / "in.json").write_text('{"n": 1}')
    code, out, err = cli(root, "caps", "call", "calc.liar", "--input-file", str(tmp_path / "in.json"),
                         capsys=capsys)
    assert code == 1 and out == "" and api_error["message"] in err
    code, out, _ = cli(root, "run", "lies.local", "--json", capsys=capsys)
    assert code == 1 and json.loads(out)["error"]["type"] == "InvalidOutput"

    result = mcp(root, "call_capability", ref="calc.liar", input={"n": 1})
    assert result["ok"] is False and result["error"]["type"] == "CallFailed"
    assert api_error["message"] in result["error"]["message"]


@pytest.mark.slow  # two real `wfops mcp` processes
def test_nan_is_refused_by_api_cli_and_mcp(root: Path, capsys: Any) -> None:
    project = wfops.Project(root)
    with pytest.raises(UsageError):
        project.run("twice.local", input={"n": float("nan")})
    waiting = project.run("ask.local")

    code, out, err = cli(root, "run", "twice.local", "--input", "n=NaN", capsys=capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "'NaN'" in err
    code, _, err = cli(root, "resume", waiting.run_id, "--outcome", "approved", "--payload", '{"v": NaN}',
                       capsys=capsys)
    assert code == 2 and "not a JSON number" in err
    code, _, err = cli(root, "resume", waiting.run_id, "--outcome", "approved", "--payload", '{"v": 1e999}',
                       capsys=capsys)
    assert code == 2 and "overflows" in err

    # An MCP client's JSON may carry 1e999, which Python reads as infinity: sent as raw JSON text.
    result = raw_mcp_call(root, "resume_run", '{"run_id": ' + json.dumps(waiting.run_id)
                          + ', "outcome": "approved", "payload": {"v": 1e999}}')
    assert result["ok"] is False and result["error"]["type"] == "UsageError" and result["exit_code"] == 2
    result = raw_mcp_call(root, "run_deployment", '{"deployment": "twice.local", "input": {"n": 1e999}}')
    assert result["ok"] is False and result["error"]["type"] == "UsageError"
    assert project.get_run(waiting.run_id).status == "interrupted"  # nothing non-finite was stored
    assert [r.status for r in project.runs()] == ["interrupted"]


@pytest.mark.parametrize("path", ["../outside.yaml", "link.yaml"])
def test_a_path_outside_the_project_is_refused_by_api_cli_and_mcp(root: Path, capsys: Any, path: str) -> None:
    (root.parent / "outside.yaml").write_text("name: leaked-secret-value\n")
    (root / "link.yaml").symlink_to(root.parent / "outside.yaml")
    with pytest.raises(UsageError, match="outside the project"):
        wfops.Project(root).validate([path])
    code, out, err = cli(root, "validate", path, capsys=capsys)
    assert code == 2 and "outside the project" in err and "leaked-secret-value" not in out + err
    result = mcp(root, "validate", paths=[path])
    assert result["ok"] is False and "outside the project" in result["error"]["message"]
    assert "leaked-secret-value" not in json.dumps(result)
    absolute = str(root.parent / "outside.yaml")
    result = mcp(root, "validate", paths=[absolute])
    assert result["ok"] is False and result["error"]["type"] == "UsageError"


def test_findings_carry_their_subject_through_api_and_mcp(root: Path) -> None:
    broken = root / "workflows/twice.yaml"
    broken.write_text(broken.read_text().replace("calc.double", "calc.dubble"))
    [found] = wfops.Project(root).validate().diagnostics
    assert (found.code, found.workflow, found.step) == ("unknown-capability", "twice", "one")
    result = mcp(root, "validate")
    [shown] = result["diagnostics"]
    assert (shown["code"], shown["workflow"], shown["step"]) == ("unknown-capability", "twice", "one")
