"""`wfops mcp` as a real subprocess, driven with the SDK's Client over stdio (slow: the process
and its stdio are the point)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.harness import process_env, run_cli
from tests.mcp.projects import BROKEN_WORKFLOW, std_project

NOISY = """
from pydantic import BaseModel

import wfops

print("noisy: imported")


class In(BaseModel):
    pass


class Out(BaseModel):
    said: str


@wfops.node
def shout(payload: In) -> Out:
    print("noisy: shouting")
    return Out(said="hi")
"""

LOUD = """
name: loud
state: {said: {type: string}}
output: {said: $state.said}
steps:
  - {id: shout, uses: noisy.shout, save: {said: state.said}, next: end}
"""


@pytest.mark.slow
def test_a_client_validates_compiles_runs_and_reads_the_trace(tmp_path: Path, caplog) -> None:
    root = std_project(tmp_path)
    # A python source that prints (at import and when called) must not corrupt the protocol on stdout.
    (root / "noisy.py").write_text(NOISY)
    (root / "sources.yaml").write_text("sources:\n  noisy: {kind: python, module: noisy}\n")
    (root / "workflows/loud.yaml").write_text(LOUD)
    (root / "deployments/loud.yaml").write_text("name: loud.local\nworkflow: loud\n")
    db = tmp_path / "elsewhere" / "runs.db"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "wfops", "mcp", "--project", str(root), "--db", str(db)],
                                   env=process_env(), cwd=str(tmp_path))

    errlog = (tmp_path / "server.err").open("w+")

    async def session() -> None:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"list_capabilities", "validate", "compile", "check", "run_deployment", "show_run",
                    "read_trace", "resume_run", "draw_graph"} <= set(tools)
            assert tools["validate"].output_schema is not None  # typed: clients get structured content

            # Broken YAML text: diagnostics with code, position and hint, before anything is saved.
            bad = (await client.call_tool("validate", {"text": BROKEN_WORKFLOW, "kind": "workflow",
                                                       "path": "workflows/broken.yaml"})).structured_content
            assert bad["ok"] is False
            [finding] = [d for d in bad["diagnostics"] if d["code"] == "unknown-target"]
            assert (finding["file"], finding["line"], finding["column"]) == ("workflows/broken.yaml", 6, 11)
            assert finding["hint"]
            assert not (root / "workflows/broken.yaml").exists()

            clean = (await client.call_tool("validate", {})).structured_content
            assert clean["ok"] is True and clean["next_steps"][0].startswith("compile")

            compiled = (await client.call_tool("compile", {})).structured_content
            assert compiled["ok"] is True and (root / "wfops.lock").is_file()
            assert any("hello.local" in step for step in compiled["next_steps"])

            ran = (await client.call_tool("run_deployment", {"deployment": "hello.local",
                                                             "input": {"who": "mcp"}})).structured_content
            assert ran["ok"] is True and ran["exit_code"] == 0
            assert db.is_file() and not (root / ".wfops" / "wfops.db").exists()  # --db is honoured
            run = ran["run"]
            assert (run["status"], run["output"]) == ("completed", {"greeting": "hello mcp"})

            trace = (await client.call_tool("read_trace", {"run_id": run["run_id"]})).structured_content
            assert [(e["seq"], e["step"], e["outcome"]) for e in trace["entries"]] == [
                (1, "greet", "ok"), (2, "shout", "ok")]
            assert trace["entries"][0]["input"] == {"template": "hello {who}", "values": {"who": "mcp"}}

            # Errors are results, and the server keeps serving.
            missing = (await client.call_tool("show_run", {"run_id": "nope"})).structured_content
            assert missing["ok"] is False and missing["error"]["type"] == "UnknownRunError"
            shown = (await client.call_tool("show_run", {"run_id": run["run_id"]})).structured_content
            assert shown["run"]["status"] == "completed"

            loud = (await client.call_tool("run_deployment", {"deployment": "loud.local"})).structured_content
            assert loud["run"]["output"] == {"said": "hi"}

    asyncio.run(asyncio.wait_for(session(), 60))
    errlog.close()
    # What the python source printed went to the server's stderr, and never onto the wire.
    assert "noisy: imported" in (tmp_path / "server.err").read_text()
    assert "noisy: shouting" in (tmp_path / "server.err").read_text()
    assert not [r for r in caplog.records if "Failed to parse" in r.getMessage()]


def test_no_project_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("mcp", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("wfops: error: no wfops project here")
    assert done.stdout == ""
