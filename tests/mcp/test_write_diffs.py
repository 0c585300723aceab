"""Write results say what changed as a unified diff, and a patch keeps the file's flow or block
style where it stands: a new step is written as its siblings are."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from tests.conftest import write
from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver.app import build_server

BLOCK = """\
name: blocky
steps:
  - id: first
    uses: std.echo
    with:
      value: 1
    next: end
"""
STEP = {"id": "later", "uses": "std.echo", "with": {"value": {"n": [1, 2]}}, "next": "end"}


def drive(root: Path, script: Any) -> None:
    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            async def call(tool: str, /, **args: Any) -> dict[str, Any]:
                result = await client.call_tool(tool, args)
                assert result.structured_content is not None, result.content
                return result.structured_content
            await script(call)
    asyncio.run(main())


def test_patches_keep_the_style_where_they_land_and_results_carry_the_diff(tmp_path: Path) -> None:
    root = std_project(tmp_path)
    write(root, {"workflows/blocky.yaml": BLOCK})
    hello = (root / "workflows/hello.yaml").read_text()

    async def script(call: Any) -> None:
        # hello writes each step's `with:` in flow style: the new step's is flow too
        patched = await call("patch_workflow", path="workflows/hello.yaml", patch=[
            {"op": "replace", "path": "/steps/1/next", "value": "later"},
            {"op": "add", "path": "/steps/-", "value": STEP}])
        assert patched["written"] is True and "text" not in patched
        now = (root / "workflows/hello.yaml").read_text()
        assert "    with: {value: {n: [1, 2]}}\n" in now
        assert now.startswith(hello.split("  - id: shout")[0])  # what the patch did not touch is as it was
        diff = patched["diff"].splitlines()
        assert diff[:2] == ["--- a/workflows/hello.yaml", "+++ b/workflows/hello.yaml"]
        assert "+    next: later" in diff and "+  - id: later" in diff and "+    with: {value: {n: [1, 2]}}" in diff
        assert [line for line in diff[2:] if line.startswith("-")] == []  # only added lines: nothing else moved

        # blocky writes block style: the new step's `with:` is block, at the file's indent
        await call("patch_workflow", path="workflows/blocky.yaml", patch=[
            {"op": "replace", "path": "/steps/0/next", "value": "later"}, {"op": "add", "path": "/steps/-", "value": STEP}])
        blocky = (root / "workflows/blocky.yaml").read_text()
        assert blocky.startswith(BLOCK.replace("next: end", "next: later"))
        assert "  - id: later\n    uses: std.echo\n    with:\n      value:\n        n:\n" in blocky

        # a new file's diff is against /dev/null; a refused write's diff is what it would have done
        created = await call("write_file", path="workflows/extra.yaml", text=BLOCK.replace("blocky", "extra"))
        assert created["diff"].startswith("--- /dev/null\n+++ b/workflows/extra.yaml\n")
        refused = await call("write_file", path="workflows/extra.yaml",
                             text=BLOCK.replace("blocky", "extra").replace("next: end", "next: nowhere"))
        assert refused["written"] is False and "+    next: nowhere" in refused["diff"]

    drive(root, script)
