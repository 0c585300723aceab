"""A declared secret an MCP source's server prints before it dies, or a python source's
import error quotes, never reaches an MCP client: `wfops mcp` as a real process, driven by
the SDK's Client over stdio. And the source's own messages, as the API returns them, are
masked where they are made."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.harness import process_env
from tests.runner.hostile import assert_no_secret
from tests.runner.secret_project import TOKEN, make_leaky_project, quoted
from wfops.api import Project
from wfops.errors import CallFailed


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_leaky_project(tmp_path_factory.mktemp("leaky-mcp"))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MCP_TOKEN", TOKEN)
        env.delenv("LEAKY_MODE", raising=False)
        env.delenv("LEAKY_IMPORT", raising=False)
        compiled = Project(root).compile()
    assert compiled.ok, compiled.diagnostics
    return root


Call = tuple[str, dict[str, Any]]


def session(root: Path, tmp_path: Path, calls: list[Call | Callable[[list[dict[str, Any]]], Call]],
            **env: str) -> list[dict[str, Any]]:
    """The structured results of `calls`, made in order by one client of one `wfops mcp`; a call
    given as a function is made from the results before it."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "wfops", "mcp", "--project", str(root), "--db", str(tmp_path / "runs.db")],
        env=process_env({"MCP_TOKEN": TOKEN, **env}), cwd=str(root))

    async def drive() -> list[dict[str, Any]]:
        with (tmp_path / "server.err").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                results = []
                for call in calls:
                    tool, arguments = call(results) if callable(call) else call
                    result = await client.call_tool(tool, arguments)
                    results.append(result.structured_content or {})
                    assert_no_secret(TOKEN, json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
                return results

    done: list[dict[str, Any]] = asyncio.run(asyncio.wait_for(drive(), 120))
    return done


@pytest.mark.slow
def test_run_deployment_and_resume_run_show_the_dying_server_s_token_masked(project: Path, tmp_path: Path) -> None:
    def resume(results: list[dict[str, Any]]) -> Call:
        return "resume_run", {"run_id": results[0]["error"]["message"].split()[1]}

    ran, caught, resumed = session(project, tmp_path, [("run_deployment", {"deployment": "dies.local"}),
                                                       ("run_deployment", {"deployment": "caught.local"}), resume])
    assert ran["ok"] is False and quoted(ran["error"]["message"]), ran
    assert quoted(caught["run"]["output"]["problem"]["message"]), caught
    assert quoted(resumed["error"]["message"]), resumed


@pytest.mark.slow
def test_check_results_show_a_quoted_token_masked(project: Path, tmp_path: Path) -> None:
    # The server dies at start and the python source's import fails, both quoting the token.
    [checked] = session(project, tmp_path, [("check", {"live": True})], LEAKY_MODE="start", LEAKY_IMPORT="1")
    found = {d["code"]: d["message"] for d in checked["diagnostics"]}
    assert quoted(found["source-unavailable"]) and quoted(found["source-import-error"]), found


@pytest.mark.slow
def test_a_secret_given_as_run_input_is_refused_naming_the_secret(project: Path, tmp_path: Path) -> None:
    [refused] = session(project, tmp_path, [("run_deployment", {"deployment": "caught.local",
                                                                "input": {"mode": TOKEN}})])
    assert refused["ok"] is False and refused["run"] is None, refused
    assert "input `mode` holds the value of the secret MCP_TOKEN" in refused["error"]["message"]


@pytest.mark.slow
def test_the_source_s_own_messages_are_masked_for_api_callers(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOKEN", TOKEN)
    with pytest.raises(CallFailed) as refused:  # a tool's error text
        Project(project).call("leaky.refuse", {})
    assert quoted(refused.value.message) and quoted(refused.value.error["message"]), refused.value.error
    monkeypatch.setenv("LEAKY_MODE", "start")
    report = Project(project).check(live=True)
    [message] = [d.message for d in report.diagnostics if d.code == "source-unavailable"]
    assert quoted(message) and TOKEN not in message
