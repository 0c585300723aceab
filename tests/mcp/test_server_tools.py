"""The `wfops mcp` tools in-process (the SDK's in-memory transport): every tool, its advice
and its errors, against real temp projects and a real SQLite store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.mcp.projects import BROKEN_WORKFLOW, std_project
from wfops.api import Project
from wfops.mcpserver import operations
from wfops.mcpserver.app import build_server

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def drive(root: Path, script: Callable[[Call], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                # A failed call is an MCP error result, and it still carries the documented shape.
                assert result.structured_content is not None, result.content
                assert result.is_error == (result.structured_content["error"] is not None), result.content
                return result.structured_content

            await script(call)

    asyncio.run(main())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return std_project(tmp_path)


def test_inline_text_replaces_the_file_it_is_meant_for(root: Path) -> None:
    async def script(call: Call) -> None:
        # A new version of workflows/hello.yaml that routes to a missing step: found at its node.
        text = (root / "workflows/hello.yaml").read_text().replace("next: end", "next: nowhere")
        out = await call("validate", {"text": text, "kind": "workflow", "path": "workflows/hello.yaml"})
        assert out["ok"] is False and out["static_checks"] is True
        assert [(d["code"], d["file"]) for d in out["diagnostics"]] == [("unknown-target", "workflows/hello.yaml")]
        # Without a path it stands in for the workflow of the same name.
        out = await call("validate", {"text": text, "kind": "workflow"})
        assert [d["file"] for d in out["diagnostics"]] == ["<inline workflow>"]
        # A clean text: advice to save it, callable as given (the text itself); no run sees it before.
        clean = BROKEN_WORKFLOW.replace("nowhere", "end")
        good = await call("validate", {"text": clean, "kind": "workflow", "path": "workflows/broken.yaml"})
        assert good["ok"] is True and good["diagnostics"] == []
        first = good["next_actions"][0]
        assert (first["tool"], first["arguments"]) == ("write_file", {"path": "workflows/broken.yaml", "text": clean})
        assert good["next_steps"][0].startswith("write_file(path=\"workflows/broken.yaml\", text=")
        assert not any(a["tool"] in ("start_run", "compile") for a in good["next_actions"])
        # A broken text: validate it again once fixed, the text and its kind passed (never `validate {}`).
        again = next(a for a in out["next_actions"] if a["tool"] == "validate")
        assert again["arguments"] == {"text": "<the fixed text>", "kind": "workflow"}
        saved = await call("write_file", first["arguments"])
        assert saved["written"] is True
        assert [a["tool"] for a in saved["next_actions"]] == ["compile"]  # the lock is stale now
        assert (await call("compile", {}))["ok"] is True
        clean_now = await call("validate", {})
        assert "compile" not in [a["tool"] for a in clean_now["next_actions"]]  # check would pass: run it
        assert [a["tool"] for a in clean_now["next_actions"]] == ["start_run", "start_run"]

    drive(root, script)


def test_inline_syntax_schema_and_deployment_errors(root: Path) -> None:
    async def script(call: Call) -> None:
        syntax = await call("validate", {"text": "name: [unclosed\n", "kind": "workflow"})
        [d] = syntax["diagnostics"]
        assert d["code"].startswith("yaml") and d["line"] >= 1 and d["hint"]
        schema = await call("validate", {"text": "name: x\nsteps:\n  - id: a\n    uses: std.echo\n    bogus: 1\n",
                                         "kind": "workflow"})
        assert [(d["code"], d["line"], d["column"]) for d in schema["diagnostics"]] == [("unknown-key", 5, 5)]
        deployment = await call("validate", {"text": "name: other.local\nworkflow: nosuch\n",
                                             "kind": "deployment"})
        assert deployment["ok"] is False
        assert any("nosuch" in d["message"] for d in deployment["diagnostics"])
        sources = await call("validate", {"text": "sources:\n  x: {kind: mcp, command: 'python -m x'}\n",
                                          "kind": "sources"})
        assert sources["ok"] is False and sources["diagnostics"][0]["file"] == "sources.yaml"
        no_kind = await call("validate", {"text": "name: x\n"})
        assert no_kind["error"]["type"] == "UsageError"

    drive(root, script)


def test_validate_reports_on_the_files_asked_for(root: Path) -> None:
    (root / "workflows/broken.yaml").write_text(BROKEN_WORKFLOW)

    async def script(call: Call) -> None:
        whole = await call("validate", {})
        assert whole["ok"] is False and {d["file"] for d in whole["diagnostics"]} == {"workflows/broken.yaml"}
        first = whole["next_actions"][0]
        assert (first["tool"], first["arguments"]) == ("read_file", {"path": "workflows/broken.yaml"})
        assert "route to a step id" in first["reason"] and whole["next_steps"][0].startswith("read_file(")
        other = await call("validate", {"paths": ["workflows/hello.yaml"]})
        assert other["ok"] is True and other["checked"] == ["workflows/hello.yaml"]

    drive(root, script)


def test_interrupt_then_resume_with_advice(root: Path) -> None:
    async def script(call: Call) -> None:
        refused = await call("run_deployment", {"deployment": "ask.local"})
        assert refused["ok"] is False and refused["error"]["type"] == "RefusedError"
        assert any(d["code"] == "stale-lock" for d in refused["diagnostics"])
        assert refused["next_actions"][0] == {"tool": "compile", "arguments": {}, "reason": refused["next_actions"][0]["reason"]}
        assert refused["next_steps"][0].startswith("compile: ")
        assert (await call("compile", {}))["ok"] is True
        assert (await call("check", {}))["ok"] is True

        out = await call("run_deployment", {"deployment": "ask.local"})
        run = out["run"]
        assert (run["status"], out["exit_code"]) == ("interrupted", 3)
        assert run["interrupt"]["request"] == {"question": "Ship it?"}
        assert sorted(run["interrupt"]["outcomes"]) == ["approved", "rejected"]
        resume = out["next_actions"][0]
        assert resume["tool"] == "resume_run" and resume["arguments"]["run_id"] == run["run_id"]
        assert resume["arguments"]["outcome"] in ("approved", "rejected") and "'approved'" in resume["reason"]

        bad = await call("resume_run", {"run_id": run["run_id"], "outcome": "maybe"})
        assert bad["ok"] is False and bad["error"]["message"]
        done = await call("resume_run", {"run_id": run["run_id"], "outcome": "approved",
                                         "payload": {"by": "ana"}})
        assert done["run"]["status"] == "completed" and done["run"]["output"] == {"answer": {"by": "ana"}}
        listed = await call("list_runs", {"deployment": "ask.local"})
        assert [r["run_id"] for r in listed["runs"]] == [run["run_id"]]

    drive(root, script)


def test_trace_pages(root: Path) -> None:
    async def script(call: Call) -> None:
        await call("compile", {})
        run_id = (await call("run_deployment", {"deployment": "hello.local"}))["run"]["run_id"]
        first = await call("read_trace", {"run_id": run_id, "limit": 1})
        assert [e["step"] for e in first["entries"]] == ["greet"] and first["next_from"] == 2
        rest = await call("read_trace", {"run_id": run_id, "from_seq": first["next_from"]})
        assert [e["step"] for e in rest["entries"]] == ["shout"] and rest["next_from"] is None
        unknown = await call("read_trace", {"run_id": "nope"})
        assert unknown["ok"] is False and unknown["error"]["type"] == "UnknownRunError"

    drive(root, script)


def test_capabilities_and_graph(root: Path) -> None:
    async def script(call: Call) -> None:
        caps = await call("list_capabilities", {})
        echo = next(c for c in caps["capabilities"] if c["ref"] == "std.echo")
        assert echo["input_schema"]["required"] == ["value"] and echo["origin"] == "live"
        graph = await call("draw_graph", {"workflow": "hello", "format": "dot"})
        assert graph["ok"] is True and graph["text"].startswith("digraph")
        unknown = await call("draw_graph", {"workflow": "nope"})
        assert unknown["ok"] is False and "hello" in unknown["error"]["hint"]

    drive(root, script)


def test_a_bug_is_a_tool_error_and_the_server_keeps_serving(root: Path, monkeypatch) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("simulated bug")

    def missing(*_: Any) -> Any:
        raise NotImplementedError("no graphs in this build")

    monkeypatch.setattr(operations, "check", broken)  # the seam: one operation fails like a bug
    monkeypatch.setattr(operations, "draw_graph", missing)  # and one is not built yet

    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            result = await client.call_tool("check", {})
            assert result.is_error and "internal error in wfops: RuntimeError: simulated bug" in result.content[0].text
            again = await client.call_tool("validate", {})
            assert not again.is_error and again.structured_content["ok"] is True
            lacking = (await client.call_tool("draw_graph", {"workflow": "hello"})).structured_content
            assert lacking["ok"] is False and lacking["error"]["type"] == "Unavailable"
            assert "no graphs in this build" in lacking["error"]["message"]

    asyncio.run(main())


def test_a_python_source_that_exits_at_import_does_not_end_the_server(root: Path) -> None:
    (root / "quitter.py").write_text("import sys\nsys.exit(3)\n")
    (root / "sources.yaml").write_text("sources:\n  q: {kind: python, module: quitter}\n")

    async def script(call: Call) -> None:
        out = await call("validate", {})
        assert out["ok"] is False  # a finding on sources.yaml, not a dead server
        finding = next(d for d in out["diagnostics"] if d["code"] == "source-import-error")
        assert "SystemExit" in finding["message"] and finding["file"] == "sources.yaml"
        graph = await call("draw_graph", {"workflow": "hello"})  # still serving
        assert graph["ok"] is True

    drive(root, script)


def test_each_committed_step_is_a_progress_notification(root: Path) -> None:
    async def main() -> list[tuple[float, str | None]]:
        seen: list[tuple[float, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, message))

        async with Client(build_server(Project(root))) as client:
            await client.call_tool("compile", {})
            result = await client.call_tool("run_deployment", {"deployment": "hello.local"},
                                            progress_callback=on_progress)
            assert result.structured_content["run"]["status"] == "completed"
            for _ in range(100):  # notifications may trail the result by a moment
                if len(seen) == 2:
                    break
                await asyncio.sleep(0.01)
        return seen

    seen = asyncio.run(main())
    assert [p for p, _ in seen] == [1, 2]
    assert seen[0][1].startswith("#1 greet [call] ok -> shout")


def test_run_tests(root: Path) -> None:
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "hello.wftest.yaml").write_text(
        "workflow: hello\ncases:\n"
        "  - name: greets\n    input: {who: ana}\n    expect: {output: {greeting: hello ana}}\n"
        "  - name: wrong\n    input: {who: ana}\n    expect: {path: [greet]}\n")

    async def script(call: Call) -> None:
        out = await call("run_tests", {})
        assert out["ok"] is False and (out["passed"], out["failed"], out["errors"]) == (1, 1, 0)
        assert out["cases"][1]["status"] == "failed" and '+    "shout",' in out["cases"][1]["diff"]
        only = await call("run_tests", {"pattern": "greets"})
        assert only["ok"] is True and [c["name"] for c in only["cases"]] == ["greets"]

    drive(root, script)


def test_a_second_server_in_one_process_reuses_the_tool_declarations_and_serves_its_own_project(
        tmp_path: Path) -> None:
    first, second = std_project(tmp_path / "a"), std_project(tmp_path / "b")
    (second / "workflows/hello.yaml").rename(second / "workflows/other.yaml")

    async def tools_and_files(root: Path) -> tuple[list[Any], list[str]]:
        async with Client(build_server(Project(root))) as client:
            listed = (await client.list_tools()).tools
            project = (await client.call_tool("list_project", {})).structured_content
            assert project is not None
            return listed, sorted(w["file"] for w in project["workflows"])

    tools_a, files_a = asyncio.run(tools_and_files(first))
    tools_b, files_b = asyncio.run(tools_and_files(second))
    # The same declarations, and each server's tools act on its own project (their closures).
    assert [t.model_dump() for t in tools_a] == [t.model_dump() for t in tools_b]
    assert files_a != files_b and "workflows/other.yaml" in files_b and "workflows/other.yaml" not in files_a
    # Taken: the second server's tools share the first's argument models instead of building new ones.
    from wfops.mcpserver import app

    servers = [build_server(Project(first)), build_server(Project(second))]
    models = [{t.name: t.fn_metadata.arg_model for t in s._tool_manager.list_tools()} for s in servers]
    assert models[0] == models[1] and all(models[0][name] is models[1][name] for name in models[0])
    assert len(app._DECLARED) >= len(models[0])
