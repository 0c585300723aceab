"""A stdio MCP source server killed mid-run: the next attempt meets a restarted server, and a
run that had no attempt left stops resumable (not failed) and completes on resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import write
from tests.harness import run_cli as wfops
from tests.mcp.helpers import STATEFUL
from wfops.api import Project
from wfops.mcpserver.app import build_server

FLAKY = """
name: flaky
state: {said: {type: object}}
output: {said: $state.said}
steps:
  - id: call
    uses: t.die_once
    with: {marker: MARKER}
    RETRY
    save: state.said
    next: end
"""


def project(root: Path, *, retry: bool) -> Path:
    workflow = FLAKY.replace("MARKER", json.dumps(str(root / "died"))).replace(
        "RETRY", "retry: {attempts: 2, backoff: 0}" if retry else "timeout: 60")
    write(root, {
        "sources.yaml": f"sources:\n  t: {{kind: mcp, command: [python, {json.dumps(STATEFUL)}]}}\n",
        "workflows/flaky.yaml": workflow,
        "deployments/flaky.yaml": "name: flaky.local\nworkflow: flaky\n",
    })
    compiled = wfops("compile", cwd=root)
    assert compiled.code == 0, compiled.stdout + compiled.stderr
    return root


@pytest.mark.slow  # starts MCP server processes
def test_a_killed_source_server_is_restarted_for_the_retry(tmp_path: Path) -> None:
    root = project(tmp_path, retry=True)
    done = wfops("run", "flaky.local", "--json", cwd=root)
    assert done.code == 0, done.stderr
    run = done.json()
    assert run["status"] == "completed" and run["output"] == {"said": {"result": "alive"}}
    assert (root / "died").exists()  # the first attempt really killed its server
    trace = wfops("runs", "trace", run["run_id"], "--json", cwd=root).json()
    failed, entry = trace if isinstance(trace, list) else trace["entries"]
    assert (failed["kind"], failed["attempt"]) == ("retry", 1) and failed["error"]  # the attempt the kill failed
    assert entry["attempt"] == 2 and entry["error"] is None


@pytest.mark.slow  # starts MCP server processes
def test_a_run_stopped_by_a_dead_server_is_kept_and_resumes(tmp_path: Path) -> None:
    root = project(tmp_path, retry=False)
    stopped = wfops("run", "flaky.local", "--json", cwd=root)
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    assert "the server closed the connection" in stopped.stdout + stopped.stderr
    [run] = wfops("runs", "list", "--json", cwd=root).json()
    assert run["status"] == "running"  # not failed: resumable from its last committed step
    resumed = wfops("resume", run["run_id"], "--json", cwd=root)
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["output"] == {"said": {"result": "alive"}}


@pytest.mark.slow  # starts MCP server processes
def test_through_wfops_mcp_a_stopped_run_says_so_and_resume_run_completes_it(tmp_path: Path) -> None:
    root = project(tmp_path, retry=False)

    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            started = (await client.call_tool("start_run", {"deployment": "flaky.local"})).structured_content
            assert started["run"], started
            run_id = started["run"]["run_id"]
            waited = await client.call_tool("wait_run", {"run_id": run_id, "timeout": 120})
            out = waited.structured_content
            assert waited.is_error and out["error"]["type"] == "RunStopped", out
            assert out["next_actions"][0] == {"tool": "resume_run", "arguments": {"run_id": run_id},
                                              "reason": out["next_actions"][0]["reason"]}
            resumed = (await client.call_tool("resume_run", {"run_id": run_id})).structured_content
            assert resumed["run"]["status"] == "completed", resumed

    asyncio.run(main())
