"""What a client reads before its first call: `tools/list` is small (shared shapes named once,
in a resource), yet keeps every tool, description and input schema; and every verb of the core
API has a tool, or a stated reason why none."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

from mcp import Client

from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver import schemas, verbs
from wfops.mcpserver.app import build_server

#: The whole `tools/list` answer, as JSON on the wire, at most this many bytes.
LIMIT = 30 * 1024


def listed(root: Path) -> tuple[Any, str]:
    async def main() -> tuple[Any, str]:
        async with Client(build_server(Project(root, db=root / "runs.db"))) as client:
            answer = await client.list_tools()
            results = await client.read_resource(schemas.RESULTS_URI)
            return answer, results.contents[0].text
    return asyncio.run(main())


def test_tools_list_is_small_and_keeps_every_description_and_input_schema(tmp_path: Path) -> None:
    answer, _ = listed(std_project(tmp_path))
    wire = answer.model_dump_json(by_alias=True, exclude_none=True)
    assert len(wire.encode()) <= LIMIT, f"tools/list is {len(wire.encode())} bytes"
    for tool in answer.tools:
        assert tool.description and "\n" not in tool.description, tool.name
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema is not None and "$defs" not in json.dumps(tool.output_schema), tool.name
        assert "ok" in tool.output_schema["properties"], tool.name


def test_shared_shapes_are_named_in_the_output_schema_and_defined_in_the_resource(tmp_path: Path) -> None:
    answer, results = listed(std_project(tmp_path))
    show = next(t for t in answer.tools if t.name == "show_run")
    assert show.output_schema["properties"]["run"] == {"type": ["object", "null"], "description": "RunOut"}
    document = json.loads(results)
    run = document["$defs"]["RunOut"]["properties"]
    assert {"run_id", "status", "state", "orphaned", "forked_from"} <= set(run)
    every = {name for tool in answer.tools for prop in tool.output_schema["properties"].values()
             for name in prop.get("description", "").replace("list of ", "").split(" or ") if name}
    assert every <= set(document["$defs"]), every - set(document["$defs"])


def test_every_verb_of_the_core_api_has_a_tool_or_a_reason(tmp_path: Path) -> None:
    public = {name for name, _ in inspect.getmembers(Project) if not name.startswith("_")}
    covered = set(verbs.TOOLS) | set(verbs.NO_TOOL)
    assert public - covered == set(), f"Project verbs with no tool and no reason: {sorted(public - covered)}"
    assert covered - public == set(), f"no such Project member: {sorted(covered - public)}"
    assert not set(verbs.TOOLS) & set(verbs.NO_TOOL)
    answer, _ = listed(std_project(tmp_path))
    served = {tool.name for tool in answer.tools}
    named = {tool for tools in verbs.TOOLS.values() for tool in tools}
    assert named - served == set(), f"tools named in verbs.TOOLS that the server lacks: {named - served}"
