"""The docs ship with the package: a real wheel of this checkout, installed on its own (no
checkout next to it), serves every `wfops://docs/PAGE` resource and answers search_docs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.harness import process_env
from tests.mcp.projects import std_project
from wfops.api import docs

PAGES = sorted(p.stem for p in (REPO / "docs").glob("*.md"))


def test_the_pages_are_the_docs_folder_and_search_finds_sections() -> None:
    assert docs.page_names() == PAGES
    [first, *_] = docs.search("foreach parallel mode")
    assert first.page == "file-format" and "foreach" in first.text.lower()
    assert docs.search("resume_run interrupt payload")[0].page in ("mcp", "runs-and-durability")
    assert docs.search("?!") == []


@pytest.mark.slow  # builds and installs a real wheel
def test_an_installed_wheel_serves_the_docs(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                    str(REPO)], check=True, capture_output=True, timeout=600)
    [wheel] = (tmp_path / "dist").glob("wfops-*.whl")
    shipped = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("wfops/docs/")}
    assert shipped == {f"wfops/docs/{page}.md" for page in PAGES}
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    root = std_project(tmp_path / "proj")
    env = process_env()
    env["PYTHONPATH"] = str(target)  # the installed copy, not this checkout
    params = StdioServerParameters(command=sys.executable, args=["-m", "wfops", "mcp", "--project", str(root)],
                                   env=env, cwd=str(tmp_path))

    async def main() -> tuple[list[str], str, dict]:
        async with Client(params) as client:
            await client.list_tools()
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            page = (await client.read_resource("wfops://docs/testing")).contents[0].text
            found = await client.call_tool("search_docs", {"query": "secrets environment"})
            return listed, page, found.structured_content or {}

    listed, page, found = asyncio.run(main())
    assert {f"wfops://docs/{p}" for p in PAGES} <= set(listed)
    assert page.startswith("# Testing workflows")
    assert found["ok"] is True and found["sections"] and found["sections"][0]["uri"].startswith("wfops://docs/")
