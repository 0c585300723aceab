"""Results cut to fit `max_chars` never crash: `read_file` of a large source, or of wfops.lock with
the smallest limit, returns the head of the text and the call that reads on (real client)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver.app import build_server
from wfops.mcpserver.bounded import MIN_MAX_CHARS


def read(root: Path, **args: Any) -> Any:
    async def main() -> Any:
        async with Client(build_server(Project(root, db=root / ".wfops" / "t.db"))) as client:
            await client.list_tools()
            if args["path"] == "wfops.lock":
                assert not (await client.call_tool("compile", {})).is_error
            return await client.call_tool("read_file", args)
    return asyncio.run(main())


def test_a_140_kb_python_source_is_cut_with_the_call_that_reads_on(tmp_path: Path) -> None:
    root = std_project(tmp_path)
    (root / "big.py").write_text("".join(f"VALUE_{n} = {'x' * 60!r}\n" for n in range(2000)))
    assert (root / "big.py").stat().st_size > 140_000
    result = read(root, path="big.py")
    assert not result.is_error, result.content
    got = result.structured_content
    assert got["text"].startswith("VALUE_0 = ") and len(got["text"]) < 1000
    [cut] = got["cuts"]
    assert cut["path"] == "/text" and cut["chars"] > 140_000
    reads_on = cut["get"]
    assert reads_on["tool"] == "read_file" and reads_on["arguments"]["path"] == "big.py"
    assert reads_on["arguments"]["start_line"] > 1


def test_the_lock_read_with_the_smallest_limit_is_cut_not_crashed(tmp_path: Path) -> None:
    root = std_project(tmp_path)
    result = read(root, path="wfops.lock", max_chars=MIN_MAX_CHARS, line_numbers=True)
    assert not result.is_error, result.content
    got = result.structured_content
    assert got["kind"] == "lock" and [c["path"] for c in got["cuts"]] == ["/text"]
    assert len(result.content[0].text) <= MIN_MAX_CHARS
