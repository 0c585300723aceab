"""`live=True` starts MCP servers and checks against their live contracts (a real server)."""

from __future__ import annotations

import sys

import pytest

from wfops.compiler.validate import validate_project

WF = """
name: clock-user
steps:
  - id: now
    uses: clock.get_current_time
    with: {timezone: 3}
    next: later
  - id: later
    uses: clock.no_such_tool
    next: end
"""


@pytest.mark.slow  # starts its own MCP server process(es)
def test_live_contracts_replace_the_lock(project) -> None:
    sources = ("sources:\n  nodes: {kind: python, module: nodes}\n"
               f"  clock: {{kind: mcp, command: [{sys.executable}, -m, mcp_server_time, --local-timezone, UTC]}}\n")
    root = project({"sources.yaml": sources, "workflows/clock.yaml": WF})
    offline = validate_project(root).diagnostics
    assert sorted((d.code, d.line) for d in offline) == [("contract-unknown", 4), ("contract-unknown", 8)]
    live = validate_project(root, live=True).diagnostics
    assert sorted((d.code, d.line, d.column) for d in live) == [("type-mismatch", 5, 22),
                                                                ("unknown-capability", 8, 11)]


def test_live_server_that_cannot_start_is_a_finding(project) -> None:
    sources = "sources:\n  nodes: {kind: python, module: nodes}\n  clock: {kind: mcp, command: [/no/such/binary]}\n"
    root = project({"sources.yaml": sources, "workflows/clock.yaml": WF})
    found = validate_project(root, live=True).diagnostics
    assert [(d.code, d.file) for d in found] == [("source-unavailable", "sources.yaml")]


def test_live_validation_from_async_code(project) -> None:
    import asyncio

    sources = "sources:\n  nodes: {kind: python, module: nodes}\n  clock: {kind: mcp, command: [/no/such/binary]}\n"
    root = project({"sources.yaml": sources, "workflows/clock.yaml": WF})

    async def inside_a_loop() -> list:
        return validate_project(root, live=True).diagnostics

    assert [d.code for d in asyncio.run(inside_a_loop())] == ["source-unavailable"]
