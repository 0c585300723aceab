"""docs/mcp.md documents every tool `wfops mcp` serves, and the registration snippet is valid JSON."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from mcp import Client

from tests.conftest import REPO
from wfops.api import Project
from wfops.mcpserver.app import build_server

DOC = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")


def test_every_tool_is_in_the_docs_table(tmp_path: Path) -> None:
    async def names() -> list[str]:
        async with Client(build_server(Project(tmp_path, db=tmp_path / "db"))) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    served = asyncio.run(names())
    tools_section = DOC.split("### Tools", 1)[1]
    documented = re.findall(r"^\| `([a-z_]+)` \|", tools_section, flags=re.MULTILINE)
    assert sorted(served) == sorted(documented)
    examples = set(re.findall(r"^`([a-z_]+) [{]", DOC.split("### Examples", 1)[1], flags=re.MULTILINE))
    assert set(served) - examples == set(), f"tools with no example call and result: {set(served) - examples}"


def test_the_client_registration_snippet_parses() -> None:
    block = re.search(r"```json\n(.*?)```", DOC, flags=re.DOTALL)
    assert block is not None
    config = json.loads(block.group(1))
    assert config["mcpServers"]["wfops"]["args"][:2] == ["mcp", "--project"]
