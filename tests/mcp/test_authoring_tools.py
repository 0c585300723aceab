"""`wfops mcp` conventions and authoring tools, through the SDK's client on the server in process:
what may be read and written, arguments refused by name, tool metadata, resources, the prompt,
scaffolds, patch errors and drift advice. (The path guard over stdio: test_agent_door.py.)"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import wfops
from tests.conftest import write
from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.mcpserver.app import build_server

Script = Callable[[Any], Awaitable[None]]


def drive(root: Path, script: Script) -> None:
    async def main() -> None:
        async with Client(build_server(Project(root, db=root / ".wfops" / "t.db"))) as client:
            await client.list_tools()
            await script(client)

    asyncio.run(main())


async def call(client: Any, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None
    return result.is_error, result.structured_content


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = std_project(tmp_path / "p")
    (tmp_path / "secret.yaml").write_text("name: outside\n")
    os.symlink(tmp_path / "secret.yaml", root / "workflows" / "link.yaml")
    return root


def test_only_project_yaml_and_python_are_read_and_only_wfops_files_written(root: Path) -> None:
    write(root, {"notes.txt": "hi\n", ".wfops/x.yaml": "a: 1\n", "nodes/n.py": "X = 1\n"})

    async def script(client: Any) -> None:
        for path in ("notes.txt", ".wfops/x.yaml", "workflows"):
            is_error, out = await call(client, "read_file", path=path)
            assert is_error and out["error"]["type"] == "UsageError", out
        is_error, out = await call(client, "read_file", path="nodes/n.py", start_line=1, end_line=1)
        assert not is_error and out["text"] == "X = 1\n" and out["kind"] == "python"
        is_error, out = await call(client, "write_file", path="nodes/n.py", text="X = 2\n")
        assert is_error and "only a workflow" in out["error"]["message"]
        assert (root / "nodes/n.py").read_text() == "X = 1\n"

    drive(root, script)


def test_unknown_and_ill_typed_arguments_are_refused_naming_the_argument(root: Path) -> None:
    async def script(client: Any) -> None:
        is_error, out = await call(client, "read_file", path="workflows/hello.yaml", colour="red")
        assert is_error and out["error"]["type"] == "InvalidArgument" and out["error"]["argument"] == "colour"
        assert "path" in out["error"]["hint"]
        is_error, out = await call(client, "wait_run", run_id="x", timeout="soon")
        assert is_error and (out["error"]["type"], out["error"]["argument"]) == ("InvalidArgument", "timeout")
        is_error, out = await call(client, "read_trace", run_id="x", limit=10_000)
        assert is_error and out["error"]["argument"] == "limit"
        is_error, out = await call(client, "list_project", max_chars=10)
        assert is_error and out["error"]["argument"] == "max_chars"
        result = await client.call_tool("no_such_tool", {})
        assert result.is_error

    drive(root, script)


def test_every_tool_has_a_title_a_description_described_parameters_and_annotations(root: Path) -> None:
    async def script(client: Any) -> None:
        tools = (await client.list_tools()).tools
        for tool in tools:
            assert tool.title and tool.description and len(tool.description) > 30, tool.name
            assert tool.annotations is not None and tool.annotations.read_only_hint is not None, tool.name
            assert tool.annotations.destructive_hint is not None and tool.annotations.idempotent_hint is not None
            assert tool.output_schema is not None, tool.name
            for name, schema in tool.input_schema.get("properties", {}).items():
                assert schema.get("description"), (tool.name, name)
        by_name = {t.name: t for t in tools}
        assert by_name["read_file"].annotations.read_only_hint is True
        assert by_name["write_file"].annotations.destructive_hint is True
        assert by_name["start_run"].annotations.read_only_hint is False

    drive(root, script)


def test_the_server_reports_its_version_and_serves_schemas_docs_and_a_prompt(root: Path) -> None:
    async def script(client: Any) -> None:
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert {"wfops://schemas/workflow", "wfops://schemas/deployment", "wfops://schemas/sources"} <= set(resources)
        assert "wfops://docs/mcp" in resources
        schema = (await client.read_resource("wfops://schemas/workflow")).contents[0].text
        assert '"steps"' in schema
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["author_workflow"]
        prompt = await client.get_prompt("author_workflow", {"goal": "greet people"})
        text = prompt.messages[0].content.text
        assert "greet people" in text and "patch_workflow" in text and "new_workflow" in text

    async def main() -> None:
        async with Client(build_server(Project(root))) as client:
            assert client.server_info.version == wfops.__version__  # type: ignore[attr-defined]
            await script(client)

    asyncio.run(main())


def test_new_workflow_is_valid_and_written_only_when_asked(tmp_path: Path) -> None:
    root = std_project(tmp_path / "clean")

    async def script(client: Any) -> None:
        is_error, out = await call(client, "new_workflow", capability="std.format", name="fmt")
        assert not is_error and out["ok"] is True and out["diagnostics"] == [] and out["written"] is False
        assert "with: {\"template\": $input.template, \"values\": $input.values}" in out["text"]
        assert not (root / "workflows/fmt.yaml").exists()
        is_error, out = await call(client, "new_workflow", capability="std.format", name="fmt", write=True)
        assert not is_error and out["written"] is True
        is_error, valid = await call(client, "validate")
        assert valid["ok"] is True
        described = (await call(client, "describe_capability", ref="std.sleep"))[1]
        assert described["capability"]["input_schema"]["required"] == ["seconds"]
        assert described["next_actions"][0]["tool"] == "call_capability"

    drive(root, script)


def test_a_patch_that_does_not_apply_names_its_op_and_touches_nothing(root: Path) -> None:
    before = (root / "workflows/hello.yaml").read_text()

    async def script(client: Any) -> None:
        is_error, out = await call(client, "patch_workflow", path="workflows/hello.yaml", patch=[
            {"op": "replace", "path": "/name", "value": "hello"},
            {"op": "remove", "path": "/steps/7"}])
        assert is_error and out["error"]["message"].startswith("patch op #1 (remove '/steps/7')")
        is_error, out = await call(client, "patch_workflow", path="workflows/hello.yaml", patch=[
            {"op": "test", "path": "/name", "value": "other"}])
        assert is_error and "test failed" in out["error"]["message"]

    drive(root, script)
    assert (root / "workflows/hello.yaml").read_text() == before


def test_drift_advice_is_compile_and_never_an_edit_of_the_lock(tmp_path: Path) -> None:
    root = std_project(tmp_path / "clean")

    async def script(client: Any) -> None:
        is_error, out = await call(client, "start_run", deployment="hello.local")
        assert is_error and out["error"]["type"] == "RefusedError"
        assert [a["tool"] for a in out["next_actions"]] == ["compile"]
        assert not any("wfops.lock" in a["tool"] or "edit" in a["reason"] for a in out["next_actions"])

    drive(root, script)


def test_a_new_file_that_takes_a_used_name_is_refused(tmp_path: Path) -> None:
    root = std_project(tmp_path / "clean")
    text = (root / "workflows/hello.yaml").read_text()

    async def script(client: Any) -> None:
        is_error, out = await call(client, "write_file", path="workflows/copy.yaml", text=text)
        assert is_error and out["error"]["type"] == "WriteRefused"
        assert [d["code"] for d in out["added"]] == ["duplicate-workflow"]

    drive(root, script)
    assert not (root / "workflows/copy.yaml").exists()
