"""Extras: what a node returns beside its output is kept in the trace entry (and shown by
`runs trace`), and never reaches state: not through `save:`, not as `$state.x.<key>`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client

import wfops as wfops_api
from tests import mcpfork
from tests.conftest import write
from tests.runner.helpers import as_json, wfops
from wfops.mcpserver.app import build_server

NODES = '''
from pydantic import BaseModel, ConfigDict

import wfops


class In(BaseModel):
    text: str


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: str


class Seen(BaseModel):
    seen: object = None


@wfops.node
def tagged(payload: In) -> wfops.Result[Out]:
    # `hidden`: a key the output model allows but does not declare; `tokens`: extra data.
    return wfops.Result("ok", Out(text=payload.text, hidden="h"), extra={"tokens": 12})


@wfops.node
def look(payload: Seen) -> Seen:
    return Seen(seen=payload.seen)
'''

FLOW = """
name: extras
state:
  x: {type: object}
  text: {type: string}
  seen: {}
output: {x: $state.x, text: $state.text, seen: $state.seen}
steps:
  - {id: tag, uses: ops.tagged, with: {text: hi}, save: state.x, next: again}
  - {id: again, uses: ops.tagged, with: {text: yo}, save: {text: state.text}, next: peek}
  - {id: peek, uses: ops.look, with: {seen: $state.x.hidden}, save: {seen: state.seen}, next: end}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": NODES,
                 "workflows/extras.yaml": FLOW, "deployments/extras.yaml": "name: extras.local\nworkflow: extras\n"})
    assert wfops(root, "compile").returncode == 0
    return root


def test_extras_are_in_the_trace_and_unreachable_from_later_steps(project: Path) -> None:
    done = wfops(project, "run", "extras.local", "--json")
    assert done.returncode == 0, done.stderr
    run = as_json(done)
    assert run["output"] == {"x": {"text": "hi"}, "text": "yo", "seen": None}  # `hidden` never saved
    trace = as_json(wfops(project, "runs", "trace", run["run_id"], "--json"))
    tag = trace[0]
    assert tag["output"] == {"text": "hi"}
    assert tag["extra"] == {"tokens": 12, "hidden": "h"}
    assert tag["state_changes"] == [{"path": "state.x", "value": {"text": "hi"}}]
    assert trace[2]["input"] == {"seen": None}  # `$state.x.hidden` finds nothing
    assert trace[2]["extra"] is None
    text = wfops(project, "runs", "trace", run["run_id"])
    assert "extra: tokens=12, hidden=" in text.stdout


SERVER = mcpfork.preamble() + '''
from typing import TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

app = MCPServer("wfops-test-extras")


class Out(TypedDict):
    v: int


@app.tool()
def give(n: int) -> Out:
    """Give `v`, plus a structured key the schema does not declare and a `_meta`."""
    return CallToolResult(content=[TextContent(type="text", text=str(n))],
                          structured_content={"v": n, "hidden": "h"}, meta={"cost": 3})


if __name__ == "__main__":
    app.run()
'''

MCP_FLOW = """
name: mcp-extras
state: {x: {type: object}}
output: {x: $state.x}
steps:
  - {id: give, uses: srv.give, with: {n: 2}, save: state.x, next: end}
"""


@pytest.mark.slow
def test_an_mcp_results_meta_and_undeclared_keys_are_extras(tmp_path: Path) -> None:
    root = tmp_path / "m"
    write(root, {"srv.py": SERVER, "workflows/mcp-extras.yaml": MCP_FLOW,
                 "sources.yaml": f"sources:\n  srv: {{kind: mcp, command: [{json.dumps(sys.executable)}, srv.py]}}\n",
                 "deployments/m.yaml": "name: m.local\nworkflow: mcp-extras\n"})
    assert wfops(root, "compile").returncode == 0
    done = wfops(root, "run", "m.local", "--json")
    assert done.returncode == 0, done.stderr
    run = as_json(done)
    assert run["output"] == {"x": {"v": 2}}
    [entry] = as_json(wfops(root, "runs", "trace", run["run_id"], "--json"))
    assert entry["output"] == {"v": 2}
    assert entry["extra"]["hidden"] == "h" and entry["extra"]["_meta"]["cost"] == 3


@pytest.mark.slow
def test_read_trace_and_describe_capability_carry_extras_and_defaults(project: Path) -> None:
    run_id = as_json(wfops(project, "run", "extras.local", "--json"))["run_id"]

    async def main() -> tuple[dict, dict]:
        async with Client(build_server(wfops_api.Project(project))) as client:
            trace = (await client.call_tool("read_trace", {"run_id": run_id})).structured_content
            cap = (await client.call_tool("describe_capability", {"ref": "ops.tagged"})).structured_content
            return trace, cap

    trace, cap = asyncio.run(main())
    assert trace["entries"][0]["extra"] == {"tokens": 12, "hidden": "h"}
    assert cap["capability"]["defaults"] == {}
