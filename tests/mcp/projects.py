"""Small std-only projects for the `wfops mcp` server tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.conftest import write

HELLO = """
name: hello
input: {type: object, required: [who], properties: {who: {type: string}}}
state:
  greeting: {type: string}
output: {greeting: $state.greeting}
steps:
  - id: greet
    uses: std.format
    with: {template: "hello {who}", values: {who: $input.who}}
    save: {text: state.greeting}
    next: shout
  - id: shout
    uses: std.echo
    with: {value: $state.greeting}
    next: end
"""

ASK = """
name: ask
state:
  answer: {type: object}
output: {answer: $state.answer}
steps:
  - id: question
    interrupt: approval
    request: {question: "Ship it?"}
    resume_schema: {type: object, required: [by], properties: {by: {type: string}}}
    save: state.answer
    on: {approved: end, rejected: no}
  - {id: no, end: rejected}
"""

BROKEN_WORKFLOW = """\
name: broken
steps:
  - id: first
    uses: std.echo
    with: {value: 1}
    next: nowhere
"""


def std_project(root: Path) -> Path:
    return write(root, {
        "sources.yaml": "sources: {}\n",
        "workflows/hello.yaml": HELLO,
        "workflows/ask.yaml": ASK,
        "deployments/hello.yaml": "name: hello.local\nworkflow: hello\ninput: {who: world}\n",
        "deployments/ask.yaml": "name: ask.local\nworkflow: ask\n",
    })


def drive_tools(root: Path, script: Callable[[Any], Awaitable[None]],
                each: Callable[[Any], None] | None = None) -> None:
    """Run `script(call)` against a real in-memory server over the SDK's client; `call(tool,
    **args)` returns the structured result, checked to agree with `isError` (and with `each`)."""
    # deferred: the SDK client, for the tests that drive a server only
    from mcp import Client

    from wfops.api import Project
    from wfops.mcpserver.app import build_server

    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            async def call(tool: str, /, **args: Any) -> dict[str, Any]:
                result = await client.call_tool(tool, args)
                data = result.structured_content
                assert data is not None, result.content
                assert result.is_error == (data["error"] is not None), result.content
                if each is not None:
                    each(result)
                return dict(data)
            await script(call)
    asyncio.run(main())
