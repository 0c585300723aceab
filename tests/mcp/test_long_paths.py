"""Every tool that takes a path refuses one with an over-long name as InvalidArgument naming
the argument, never an internal error (real client, server in process)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver.app import build_server

LONG = "n" * 300

CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": f"workflows/{LONG}.yaml"}, "path"),
    ("write_file", {"path": f"workflows/{LONG}.yaml", "text": "name: x\nsteps: []\n"}, "path"),
    ("patch_workflow", {"path": f"{LONG}/x.yaml", "patch": []}, "path"),
    ("validate", {"paths": [f"workflows/{LONG}"]}, "paths"),
    ("validate", {"text": "name: x\nsteps: []\n", "kind": "workflow", "path": f"workflows/{LONG}.yaml"}, "path"),
    ("run_tests", {"paths": [f"tests/{LONG}.wftest.yaml"]}, "paths"),
    ("new_workflow", {"capability": "std.echo", "name": LONG, "write": True}, "name"),
]


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    root = std_project(tmp_path_factory.mktemp("long"))

    async def main() -> list[Any]:
        async with Client(build_server(Project(root, db=root / ".wfops" / "t.db"))) as client:
            await client.list_tools()
            return [await client.call_tool(tool, args) for tool, args, _ in CALLS]
    return asyncio.run(main())


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{c[0]}-{c[2]}" for c in CALLS])
def test_an_over_long_name_is_an_invalid_argument(answers: list[Any], index: int) -> None:
    result = answers[index]
    assert result.is_error and result.structured_content is not None, result.content
    error = result.structured_content["error"]
    assert error["type"] == "InvalidArgument" and error["argument"] == CALLS[index][2]
    assert "bytes; a file or folder name is at most 255" in error["message"]
