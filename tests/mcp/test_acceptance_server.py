"""Acceptance, as an agent sees it: `wfops mcp` as a real subprocess, driven over stdio with
the SDK client: validate files the way `wfops validate PATHS` does, runs that are
refused report the exit code the CLI would give, and the advice names tools that work."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import write
from tests.harness import process_env
from tests.mcp.projects import BROKEN_WORKFLOW, std_project

pytestmark = pytest.mark.slow  # `wfops mcp` processes over stdio: the process boundary is the point

Call = Callable[..., Awaitable[dict[str, Any]]]

FAILING = """
name: failing
steps:
  - {id: boom, uses: std.fail, with: {message: "no luck"}, next: end}
"""


def agent(root: Path, script: Callable[[Call], Awaitable[None]], tmp_path: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "wfops", "mcp", "--project", str(root)],
                                       env=process_env(), cwd=str(tmp_path))  # the client's cwd is not the project
        with (tmp_path / "server.err").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await client.list_tools()

                async def call(name: str, **args: Any) -> dict[str, Any]:
                    result = await client.call_tool(name, args, read_timeout_seconds=60)
                    # A failed call is an MCP error result, and it still carries the documented shape.
                    assert result.structured_content is not None, result.content
                    assert result.is_error == (result.structured_content["error"] is not None), result.content
                    return result.structured_content

                await script(call)

    asyncio.run(main())


def test_validate_paths_selects_like_the_cli(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    write(root, {"workflows/broken.yaml": BROKEN_WORKFLOW, "nodes/__init__.py": "",
                 "nodes/bad.py": "import no_such_module_anywhere\n",
                 "sources.yaml": "sources:\n  bad: {kind: python, module: nodes.bad}\n"})

    async def script(call: Call) -> None:
        missing = await call("validate", paths=["workflows/nope.yaml"])
        assert missing["ok"] is False
        assert [(d["code"], d["file"]) for d in missing["diagnostics"]] == [("file-missing", "workflows/nope.yaml")]

        folder = await call("validate", paths=["workflows"])  # a folder: every file in it
        assert folder["ok"] is False
        assert {d["file"] for d in folder["diagnostics"]} == {"workflows/broken.yaml"}
        assert {d["code"] for d in folder["diagnostics"]} == {"unknown-target"}

        other = await call("validate", paths=["deployments/hello.yaml"])
        assert other["ok"] is True and other["diagnostics"] == []

        nul = await call("validate", paths=["work\0flows"])  # an error result, not a crash
        assert nul["ok"] is False and nul["error"]["type"] == "UsageError"

        source = await call("validate", paths=["nodes/bad.py"])  # reported at its sources.yaml entry
        assert source["ok"] is False
        assert [(d["severity"], d["file"]) for d in source["diagnostics"]] == [("error", "sources.yaml")]
        assert "no_such_module_anywhere" in source["diagnostics"][0]["message"]

    agent(root, script, tmp_path)


def test_refused_and_failed_runs_report_exit_codes_and_usable_advice(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    write(root, {"workflows/failing.yaml": FAILING, "deployments/failing.yaml": "name: failing.local\n"
                                                                                "workflow: failing\n"})

    async def script(call: Call) -> None:
        refused = await call("run_deployment", deployment="hello.local")  # never compiled: no lock
        assert refused["ok"] is False and refused["run"] is None
        assert refused["exit_code"] == 2  # as `wfops run` exits when it refuses
        assert "stale-lock" in {d["code"] for d in refused["diagnostics"]}

        bad_input = await call("run_deployment", deployment="nope")
        assert bad_input["exit_code"] == 2 and bad_input["error"]["type"] == "RefusedError"

        assert (await call("compile"))["ok"] is True
        failed = await call("run_deployment", deployment="failing.local")
        assert failed["run"]["status"] == "failed" and failed["exit_code"] == 1
        # a failed run: see why, then redrive it (resume_run) once the cause is fixed
        assert [a["tool"] for a in failed["next_actions"]] == ["read_trace", "resume_run"]
        beyond = await call("read_trace", run_id=failed["run"]["run_id"], from_seq=10**30)  # past SQLite's int64
        assert beyond["ok"] is True and beyond["entries"] == []
        # resuming a failed run redrives its failed step: `std.fail` fails again
        again = await call("resume_run", run_id=failed["run"]["run_id"])
        assert again["ok"] is False and again["exit_code"] == 1 and again["run"]["status"] == "failed"

        unknown = await call("show_run", run_id="20000101-000000-deadbeef")
        assert unknown["error"]["type"] == "UnknownRunError" and unknown["exit_code"] == 1
        # advice in tool calls, not CLI commands
        assert any(step.startswith("list_runs") for step in unknown["next_steps"])
        trace = await call("read_trace", run_id="20000101-000000-deadbeef")
        assert trace["ok"] is False and any(s.startswith("list_runs") for s in trace["next_steps"])

    agent(root, script, tmp_path)
