"""Sources an MCP client writes are not started or imported by any tool until a person says yes:
through `wfops sources approve`, an elicitation the client's user accepts, or the server flag
`--allow-client-sources`. Driven with the SDK's real client on the server in process; the
code a source would run leaves a marker file, so "not started" is a file that does not exist."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult

from tests.harness import WFOPS, process_env, run_cli
from tests.mcp.projects import std_project
from wfops.api import Project
from wfops.api.approvals import record_written
from wfops.mcpserver.app import build_server

# Tools that start or import sources, with arguments that would start `evil`.
STARTERS: list[tuple[str, dict[str, Any]]] = [
    ("check", {"live": True}),
    ("compile", {}),
    ("list_capabilities", {"source": "evil"}),
    ("list_capabilities", {}),
    ("describe_capability", {"ref": "evil.anything"}),
    ("call_capability", {"ref": "evil.anything", "input": {}}),
    ("new_workflow", {"capability": "evil.anything", "name": "evil-flow"}),
    ("start_run", {"deployment": "hello.local"}),
    ("run_deployment", {"deployment": "hello.local"}),
]

BOOM = """\
from pathlib import Path

Path(__file__).with_name("imported").write_text("yes")
"""


def mcp_source(marker: Path, source_id: str = "evil") -> str:
    code = f"open({str(marker)!r}, 'w').write('ran')"
    return f"sources:\n  {source_id}: {{kind: mcp, command: [{json.dumps(sys.executable)}, -c, {json.dumps(code)}]}}\n"


def drive(root: Path, script: Any, *, elicit: Any = None, allow: bool = False, mode: str = "auto") -> None:
    async def main() -> None:
        server = build_server(Project(root, db=root / ".wfops" / "t.db"), allow_client_sources=allow)
        async with Client(server, elicitation_callback=elicit, mode=mode) as client:  # type: ignore[arg-type]
            await client.list_tools()
            await script(client)

    asyncio.run(main())


async def call(client: Any, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None, result
    return result.is_error, result.structured_content


def answer(action: str, approve: bool = True) -> Any:
    asked: list[str] = []

    async def callback(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action=action, content={"approve": approve} if action == "accept" else None)
    callback.asked = asked  # type: ignore[attr-defined]
    return callback


def test_an_mcp_source_the_client_wrote_starts_only_after_a_person_approves_it(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    marker = tmp_path / "ran"

    async def write(client: Any) -> None:
        bad, got = await call(client, "write_file", path="sources.yaml", text=mcp_source(marker))
        assert not bad and got["written"] and got["awaiting_approval"] == ["evil"]
        assert "wfops sources approve evil" in got["next_steps"][0]
        for tool, args in STARTERS:
            bad, got = await call(client, tool, **args)
            assert bad, (tool, got)
            assert got["error"]["type"] == "SourcesAwaitApproval", (tool, got)
            assert "wfops sources approve evil" in got["error"]["hint"]
            assert got["next_actions"][0]["tool"] == tool
        # Reading and checking without starting anything still works.
        assert not (await call(client, "validate"))[0]
        assert not (await call(client, "list_project"))[0]
    drive(root, write)
    assert not marker.exists()

    listed = run_cli("sources", "list", "--project", str(root))
    assert listed.code == 0 and "evil (mcp)" in listed.stdout and str(marker) in listed.stdout
    done = run_cli("sources", "approve", "evil", "--project", str(root))
    assert done.code == 0, done.stderr
    assert str(marker) in done.stdout and "approved" in done.stdout  # the person saw what they approved

    async def after(client: Any) -> None:
        await call(client, "list_capabilities", source="evil")  # it starts (then fails: it is no server)
    drive(root, after)
    assert marker.read_text() == "ran"
    assert "no source awaits approval" in run_cli("sources", "list", "--project", str(root)).stdout


def test_a_changed_declaration_needs_a_new_yes_and_an_editor_s_source_needs_none(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    marker, other = tmp_path / "ran", tmp_path / "other"
    (root / "sources.yaml").write_text(mcp_source(marker))  # a person wrote this: no step needed

    async def change(client: Any) -> None:
        await call(client, "list_capabilities", source="evil")
        assert marker.exists()
        bad, got = await call(client, "patch_workflow", path="sources.yaml", patch=[
            {"op": "replace", "path": "/sources/evil/command/2", "value": f"open({str(other)!r}, 'w')"}])
        assert not bad and got["awaiting_approval"] == ["evil"], got
        bad, got = await call(client, "list_capabilities", source="evil")
        assert bad and got["error"]["type"] == "SourcesAwaitApproval"
    drive(root, change)
    assert not other.exists()

    # The person edits the client's declaration by hand: it is theirs now.
    (root / "sources.yaml").write_text(mcp_source(other).replace("'ran'", "'edited'"))

    async def edited(client: Any) -> None:
        await call(client, "list_capabilities", source="evil")
    drive(root, edited)
    assert other.read_text() == "edited"


# auto: the current protocol (the question rides an input request); legacy: asked mid-call.
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_python_source_the_client_declares_is_not_imported_even_to_validate(tmp_path: Path, mode: str) -> None:
    root = std_project(tmp_path / "p")
    (root / "boom.py").write_text(BOOM)
    imported = root / "imported"
    declined, accepted = answer("decline"), answer("accept")

    async def declare(client: Any) -> None:
        bad, got = await call(client, "patch_workflow", path="sources.yaml", patch=[
            {"op": "add", "path": "/sources/boom", "value": {"kind": "python", "module": "boom"}}])
        assert not bad and got["written"] and got["awaiting_approval"] == ["boom"], got
        assert [d["code"] for d in got["diagnostics"]] == ["source-unapproved"]
        bad, got = await call(client, "validate")
        assert not bad and [d["code"] for d in got["diagnostics"]] == ["source-unapproved"]
        unsaved = "sources:\n  boom: {kind: python, module: boom}\n  again: {kind: python, module: boom}\n"
        bad, got = await call(client, "validate", text=unsaved, kind="sources")
        assert [d["code"] for d in got["diagnostics"]] == ["source-unapproved"] * 2, got
        bad, got = await call(client, "list_capabilities")
        assert bad and got["error"]["type"] == "SourcesAwaitApproval"
    drive(root, declare, elicit=declined, mode=mode)
    assert declined.asked and "boom (python)" in declined.asked[0] and '"module":"boom"' in declined.asked[0]
    assert not imported.exists()

    async def approve(client: Any) -> None:
        bad, got = await call(client, "list_capabilities")
        assert not bad, got
    drive(root, approve, elicit=accepted, mode=mode)
    assert accepted.asked and imported.exists()
    record = json.loads((root / ".wfops" / "client-sources.json").read_text())
    assert [a["by"] for a in record["approved"].values()] == ["elicitation"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_yes_counts_only_for_the_declaration_the_question_showed(tmp_path: Path, mode: str) -> None:
    root = std_project(tmp_path / "p")
    first, second = tmp_path / "first", tmp_path / "second"
    shown: list[str] = []

    async def swap_then_accept(context: Any, params: Any) -> ElicitResult:
        shown.append(params.message)
        if len(shown) == 1:  # while the user reads, the client swaps the declaration
            before = (root / "sources.yaml").read_text()
            record_written(root, before, mcp_source(second), "mcp")
            (root / "sources.yaml").write_text(mcp_source(second))
        return ElicitResult(action="accept", content={"approve": True})

    async def script(client: Any) -> None:
        await call(client, "write_file", path="sources.yaml", text=mcp_source(first))
        await call(client, "list_capabilities", source="evil")
    drive(root, script, elicit=swap_then_accept, mode=mode)
    assert not first.exists()
    # What ran (if anything did) is what a question showed.
    assert second.exists() == any(str(second) in question for question in shown)
    assert str(first) in shown[0]


def test_a_client_without_elicitation_is_refused_with_how_a_person_approves(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    marker = tmp_path / "ran"

    async def script(client: Any) -> None:
        await call(client, "write_file", path="sources.yaml", text=mcp_source(marker))
        bad, got = await call(client, "check", live=True)
        assert bad and got["error"]["type"] == "SourcesAwaitApproval"
    drive(root, script)  # no elicitation callback: the refusal says how a person approves
    assert not marker.exists()


def test_only_a_tool_that_would_start_a_source_asks(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    asker = answer("decline")

    async def script(client: Any) -> None:
        await call(client, "write_file", path="sources.yaml", text=mcp_source(tmp_path / "ran"))
        assert not (await call(client, "check"))[1]["error"]  # not live: starts nothing, asks nothing
        assert not asker.asked
        bad, got = await call(client, "check", live=True)
        assert bad and got["error"]["type"] == "SourcesAwaitApproval" and len(asker.asked) == 1
    drive(root, script, elicit=asker)


def stdio(root: Path, *flags: str, elicit: Any = None) -> Client:
    params = StdioServerParameters(command=WFOPS[0], args=[*WFOPS[1:], "mcp", "--project", str(root), *flags],
                                   env=process_env(), cwd=str(root))
    return Client(params, elicitation_callback=elicit)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["elicitation", "--allow-client-sources"])
def test_over_stdio_a_client_source_runs_after_elicitation_or_with_the_flag(tmp_path: Path, how: str) -> None:
    root = std_project(tmp_path / "p")
    marker = tmp_path / "ran"
    asker = answer("accept")

    async def main() -> None:
        flags = [how] if how.startswith("--") else []
        async with stdio(root, *flags, elicit=asker if how == "elicitation" else None) as client:
            await client.list_tools()
            await call(client, "write_file", path="sources.yaml", text=mcp_source(marker))
            await call(client, "list_capabilities", source="evil")
    asyncio.run(main())
    assert marker.exists()
    assert bool(asker.asked) == (how == "elicitation")


def test_the_person_s_server_flag_lets_client_sources_run(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    marker = tmp_path / "ran"

    async def script(client: Any) -> None:
        bad, got = await call(client, "write_file", path="sources.yaml", text=mcp_source(marker))
        assert not bad and got["awaiting_approval"] == []
        await call(client, "list_capabilities", source="evil")
    drive(root, script, allow=True)
    assert marker.exists()


def test_the_client_cannot_write_the_record_of_what_it_wrote(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")

    async def script(client: Any) -> None:
        for path in (".wfops/client-sources.json", ".wfops/x.yaml", "../client-sources.json"):
            bad, got = await call(client, "write_file", path=path, text="{}\n")
            assert bad, (path, got)
    drive(root, script)
    assert not (root / ".wfops" / "client-sources.json").exists()


def test_tools_that_start_processes_say_so_in_their_annotations(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")

    async def script(client: Any) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("check", "compile", "list_capabilities", "describe_capability", "call_capability",
                     "start_run", "run_deployment", "resume_run"):
            hints = tools[name].annotations
            assert hints.read_only_hint is False and hints.open_world_hint is True, name
    drive(root, script)


def test_approving_what_sources_yaml_does_not_declare_is_a_one_line_usage_error(tmp_path: Path) -> None:
    root = std_project(tmp_path / "p")
    done = run_cli("sources", "approve", "nope", "--project", str(root))
    assert done.code == 2 and "declares no source 'nope'" in done.stderr
    assert "Traceback" not in done.stderr


DASK_DEPLOYMENT = "name: hello.local\nworkflow: hello\nexecutor: {kind: dask, address: 'tcp://127.0.0.1:8786'}\n"



def test_a_client_may_not_point_a_deployment_at_a_cluster(tmp_path: Path) -> None:
    # The executor decides whose answers the driver unpickles: a Dask address is code too.
    root = std_project(tmp_path / "p")
    deployment = root / "deployments" / "hello.yaml"
    before = deployment.read_text()

    async def write(client: Any) -> None:
        bad, got = await call(client, "write_file", path=f"deployments/{deployment.name}", text=DASK_DEPLOYMENT)
        assert bad and got["error"]["type"] == "RefusedError" and "executor" in got["error"]["message"], got
        bad, got = await call(client, "patch_workflow", path=f"deployments/{deployment.name}", patch=[
            {"op": "add", "path": "/executor", "value": {"kind": "dask", "address": "tcp://127.0.0.1:8786"}}])
        assert bad and got["error"]["type"] == "RefusedError", got
    drive(root, write)
    assert deployment.read_text() == before

    # A person's cluster stays usable by the client's later edits, and the flag lifts the rule.
    deployment.write_text(DASK_DEPLOYMENT)

    async def keep(client: Any) -> None:
        bad, got = await call(client, "write_file", path=f"deployments/{deployment.name}",
                              text=DASK_DEPLOYMENT + "input: {who: world}\n")
        assert not bad, got
    drive(root, keep)

    async def allowed(client: Any) -> None:
        bad, got = await call(client, "write_file", path=f"deployments/{deployment.name}",
                              text=DASK_DEPLOYMENT.replace("8786", "8787"))
        assert not bad, got
    drive(root, allowed, allow=True)
    assert "8787" in deployment.read_text()
