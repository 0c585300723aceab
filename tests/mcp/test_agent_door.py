"""The agent's door: a whole lifecycle (author, run, repair) through `wfops mcp` alone, driven by
the SDK's real client over stdio against a real server process (slow: the process is the point)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import wfops
from tests.conftest import write
from tests.harness import process_env
from tests.mcp.projects import BROKEN_WORKFLOW, std_project
from wfops.mcpserver.app import build_server

Call = Callable[..., Awaitable[dict[str, Any]]]
LIMIT = 64 * 1024


def session(root: Path, tmp_path: Path, script: Callable[[Call, Any], Awaitable[None]]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "wfops", "mcp", "--project", str(root)],
                                   env=process_env(), cwd=str(tmp_path))

    async def main() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await client.list_tools()

                async def call(name: str, **args: Any) -> dict[str, Any]:
                    result = await client.call_tool(name, args, read_timeout_seconds=120)
                    data = result.structured_content
                    assert data is not None, result.content
                    # A failed call is an MCP error result carrying the documented shape.
                    assert result.is_error == (data["error"] is not None), result.content
                    # Every result is bounded, its text twin included.
                    assert len(result.content[0].text) <= args.get("max_chars", LIMIT)
                    return data

                await script(call, client)

    asyncio.run(main())


def action(result: dict[str, Any], tool: str) -> dict[str, Any]:
    return next(a for a in result["next_actions"] if a["tool"] == tool)


@pytest.mark.slow
def test_author_run_and_repair_a_wfops_init_project_through_mcp_alone(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    wfops.init(root)
    original = (root / "workflows/hello.yaml").read_text()

    async def script(call: Call, _client: Any) -> None:
        listing = await call("list_project")
        [hello] = listing["workflows"]
        assert (hello["name"], hello["file"], hello["deployments"]) == ("hello", "workflows/hello.yaml",
                                                                         ["hello.local"])
        assert hello["input_schema"]["required"] == ["name"]
        assert [s["id"] for s in listing["sources"]] == ["hello"]
        assert "nodes/hello.py" in listing["files"]["python"]
        read = action(listing, "read_file")
        text = await call("read_file", **read["arguments"], line_numbers=True)
        assert text["total_lines"] == original.count("\n") and " 2| name: hello\n" in text["text"]

        # A focused edit: an approval step after `decorate`, comments and formatting kept.
        patched = await call("patch_workflow", path="workflows/hello.yaml", patch=[
            {"op": "test", "path": "/steps/1/id", "value": "decorate"},
            {"op": "replace", "path": "/steps/1/next", "value": "approve"},
            {"op": "add", "path": "/steps/-", "value": {
                "id": "approve", "interrupt": "approval", "request": {"question": "Ship it?"},
                "on": {"approved": "end", "rejected": "end"}}},
        ])
        assert patched["ok"] is True and patched["written"] is True, patched
        now = (root / "workflows/hello.yaml").read_text()
        assert "uses: hello.greet                 # <logical source>.<capability>" in now
        assert now.startswith("# yaml-language-server: $schema=../.wfops-schemas/workflow.schema.json\n")
        assert now.replace("    next: approve\n  - id: approve\n", "    next: end\n", 1).split(
            "    interrupt: approval")[0].startswith(original.split("    next: end\n")[0])
        assert action(patched, "compile")["arguments"] == {}

        # A broken write is refused with its diagnostics; the file is never created.
        refused = await call("write_file", path="workflows/extra.yaml", text=BROKEN_WORKFLOW)
        assert refused["ok"] is False and refused["written"] is False
        assert refused["error"]["type"] == "WriteRefused"
        assert [d["code"] for d in refused["added"]] == ["unknown-target"]
        assert not (root / "workflows/extra.yaml").exists()
        fixed = await call("write_file", path="workflows/extra.yaml", text=BROKEN_WORKFLOW.replace("nowhere", "end"))
        assert fixed["written"] is True and fixed["created"] is True and fixed["added"] == []

        compiled = await call("compile")
        assert compiled["ok"] is True
        start = action(compiled, "start_run")
        assert start["arguments"] == {"deployment": "hello.local"}
        started = await call("start_run", **start["arguments"])
        run_id = started["run"]["run_id"]
        waited = await call("wait_run", **action(started, "wait_run")["arguments"])
        assert waited["done"] is True and waited["run"]["status"] == "interrupted"
        assert waited["run"]["interrupt"]["request"] == {"question": "Ship it?"}
        resume = action(waited, "resume_run")
        assert resume["arguments"]["run_id"] == run_id and resume["arguments"]["outcome"] in ("approved", "rejected")

        resumed = await call("resume_run", run_id=run_id, outcome="approved")
        assert resumed["run"]["status"] == "completed"
        assert resumed["run"]["output"]["banner"] == "*** Hello, world! ***"
        assert [a["tool"] for a in resumed["next_actions"]] == ["read_trace"]  # nothing to resume
        trace = await call("read_trace", run_id=run_id)
        assert [e["step"] for e in trace["entries"]] == ["greet", "decorate", "approve", "approve"]

    session(root, tmp_path, script)


SLOW = """
name: slow
steps:
  - id: nap
    uses: std.sleep
    with: {seconds: 600}
    next: end
"""


@pytest.mark.slow
def test_a_long_run_goes_on_while_other_tools_answer(tmp_path: Path) -> None:
    root = write(std_project(tmp_path / "p"), {"workflows/slow.yaml": SLOW,
                                              "deployments/slow.yaml": "name: slow.local\nworkflow: slow\n"})

    async def script(call: Call, _client: Any) -> None:
        assert (await call("compile"))["ok"] is True
        started = await call("start_run", deployment="slow.local")
        run_id = started["run"]["run_id"]
        assert started["run"]["status"] == "running"
        # validate (a project tool) and a short blocking run both answer while the long run sleeps.
        assert (await call("validate"))["ok"] is True
        short = await call("run_deployment", deployment="hello.local")
        assert short["run"]["status"] == "completed"
        waited = await call("wait_run", run_id=run_id, timeout=0)
        assert waited["done"] is False and waited["run"]["status"] == "running"
        assert [a["tool"] for a in waited["next_actions"]][:1] == ["wait_run"]
        shown = await call("show_run", run_id=run_id)
        assert shown["run"]["status"] == "running"  # still going after everything above answered

    session(root, tmp_path, script)
    # The server is gone with the client; the run it drove is left resumable, as after any crash.
    found = wfops.Project(root).runs(deployment="slow.local")
    assert [r.status for r in found] == ["running"]


@pytest.mark.slow
def test_cancel_run_stops_a_run_the_server_drives_and_resume_continues_it(tmp_path: Path) -> None:
    root = write(std_project(tmp_path / "p"), {"workflows/slow.yaml": SLOW,
                                              "deployments/slow.yaml": "name: slow.local\nworkflow: slow\n"})

    async def script(call: Call, _client: Any) -> None:
        assert (await call("compile"))["ok"] is True
        run_id = (await call("start_run", deployment="slow.local"))["run"]["run_id"]
        cancelled = await call("cancel_run", run_id=run_id)
        assert cancelled["ok"] is True and cancelled["run"]["status"] in ("running", "cancelled")
        if cancelled["run"]["status"] == "running":  # driven: stopped at its driver's next check
            assert [a["tool"] for a in cancelled["next_actions"]] == ["wait_run"]
            waited = await call("wait_run", run_id=run_id, timeout=60)
            assert waited["done"] is True, waited
            cancelled = waited
        assert cancelled["run"]["status"] == "cancelled"
        assert "resume_run" in [a["tool"] for a in cancelled["next_actions"]]
        listed = await call("list_runs", status="cancelled")
        assert [r["run_id"] for r in listed["runs"]] == [run_id]
        again = await call("cancel_run", run_id=run_id)  # idempotent
        assert again["run"]["status"] == "cancelled"
        done = await call("run_deployment", deployment="hello.local")
        refused = await call("cancel_run", run_id=done["run"]["run_id"])  # a completed run: nothing to stop
        assert refused["ok"] is False and refused["error"]["type"] == "RefusedError" and refused["exit_code"] == 2

    session(root, tmp_path, script)
    assert [r.status for r in wfops.Project(root).runs(deployment="slow.local")] == ["cancelled"]


BIG = """
name: big
input: {type: object, required: [blob], properties: {blob: {type: string}}}
state:
  copy: {type: string}
output: {copy: $state.copy}
steps:
  - id: copy
    uses: std.echo
    with: {value: $input.blob}
    save: {value: state.copy}
    next: end
"""


@pytest.mark.slow
def test_a_5_mb_value_stays_under_the_result_limit_and_can_be_read_whole(tmp_path: Path) -> None:
    root = write(std_project(tmp_path / "p"), {"workflows/big.yaml": BIG,
                                              "deployments/big.yaml": "name: big.local\nworkflow: big\n"})
    blob = "0123456789abcdef" * (5 * 1024 * 1024 // 16)

    async def script(call: Call, _client: Any) -> None:
        assert (await call("compile"))["ok"] is True
        started = await call("start_run", deployment="big.local", input={"blob": blob})
        done = await call("wait_run", run_id=started["run"]["run_id"], timeout=120)
        assert done["run"]["status"] == "completed"
        [cut] = done["cuts"]
        assert cut["path"] == "/run/output" and cut["chars"] > len(blob)
        assert done["run"]["output"]["$cut"] is True and done["run"]["output"]["chars"] == cut["chars"]

        # The cut value, whole, page by page.
        get = cut["get"]
        assert (get["tool"], get["arguments"]["value"]) == ("show_run", "/output")
        pages, args = [], {**get["arguments"], "max_chars": 1_000_000}
        while True:
            page = await call("show_run", **args)
            pages.append(page["value"]["text"])
            if page["value"]["next_offset"] is None:
                break
            args = action(page, "show_run")["arguments"]
        assert json.loads("".join(pages)) == {"copy": blob}

        listed = await call("list_runs", limit=5)
        assert listed["cuts"] and listed["cuts"][0]["get"]["tool"] == "show_run"
        trace = await call("read_trace", run_id=started["run"]["run_id"])
        assert {c["get"]["arguments"]["value"] for c in trace["cuts"]} == {"/trace/1/input", "/trace/1/output",
                                                                           "/trace/1/state_changes/0/value"}
        small = await call("list_runs", limit=5, max_chars=8000)
        assert small["ok"] is True

    session(root, tmp_path, script)


@pytest.mark.slow  # starts the reference time server
def test_describe_capability_shows_what_an_mcp_tool_declares(tmp_path: Path) -> None:
    root = write(std_project(tmp_path / "p"), {
        "sources.yaml": "sources:\n  clock: {kind: mcp, command: [python, -m, mcp_server_time, --local-timezone, UTC]}\n"})

    async def main() -> dict[str, Any]:
        async with Client(build_server(wfops.Project(root))) as client:
            result = await client.call_tool("describe_capability", {"ref": "clock.get_current_time"})
            assert not result.is_error, result.content
            return dict(result.structured_content or {})

    described = asyncio.run(main())["capability"]
    assert described["annotations"]["readOnlyHint"] is True and described["annotations"]["destructiveHint"] is False
    assert described["description"] and described["input_schema"]["required"] == ["timezone"]
    assert described["outcomes"] == ["ok"]


OUTSIDE = ["../secret.yaml", "/etc/passwd", "workflows/../../secret.yaml", "workflows/link.yaml"]


@pytest.mark.slow
def test_a_path_outside_the_project_is_refused_by_every_tool_that_takes_one(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    (tmp_path / "secret.yaml").write_text("name: outside\n")
    os.symlink(tmp_path / "secret.yaml", root / "workflows" / "link.yaml")  # a symlink out

    async def script(call: Call, _client: Any) -> None:
        for bad in OUTSIDE:
            attempts = [
                ("read_file", {"path": bad}),
                ("write_file", {"path": bad, "text": "name: x\nsteps: []\n", "force": True}),
                ("patch_workflow", {"path": bad, "patch": [{"op": "replace", "path": "/name", "value": "y"}]}),
                ("validate", {"paths": [bad]}),
                ("validate", {"text": "name: x\n", "kind": "workflow", "path": bad}),
            ]
            for tool, args in attempts:
                out = await call(tool, **args)
                assert out["error"]["type"] == "UsageError", (tool, bad, out)
                assert "outside the project" in out["error"]["message"], (tool, bad, out)

    session(root, tmp_path, script)
    assert (tmp_path / "secret.yaml").read_text() == "name: outside\n"
