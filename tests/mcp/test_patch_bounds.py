"""A hostile JSON Patch through `patch_workflow` is refused with a PatchError and leaves the
file untouched: the doubling bomb, and an invalid `~` escape (real client, server in process)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from tests.harness import finishes
from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver.app import build_server


def patch(root: Path, ops: list[dict[str, Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(Project(root, db=root / ".wfops" / "t.db"))) as client:
            await client.list_tools()
            result = await client.call_tool("patch_workflow", {"path": "workflows/hello.yaml", "patch": ops})
            assert not (await client.call_tool("list_project", {})).is_error  # the server still answers
            return result
    return finishes(lambda: asyncio.run(main()))


def test_the_doubling_bomb_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    root = std_project(tmp_path)
    before = (root / "workflows/hello.yaml").read_text()
    result = patch(root, [{"op": "copy", "from": "/state", "path": f"/state/k{i}"} for i in range(21)])
    assert result.is_error
    assert result.structured_content["error"]["type"] == "PatchError"
    assert result.structured_content["error"]["message"].startswith("patch op #")
    assert (root / "workflows/hello.yaml").read_text() == before


def test_an_invalid_pointer_escape_is_a_patch_error(tmp_path: Path) -> None:
    root = std_project(tmp_path)
    result = patch(root, [{"op": "add", "path": "/state/a~2b", "value": {}}])
    assert result.is_error and result.structured_content["error"]["type"] == "PatchError"
    assert "`~` is written `~0`" in result.structured_content["error"]["message"]
