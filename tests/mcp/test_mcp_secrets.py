"""Secrets through MCP: a capability's token input is scaffolded by reference ($secret.NAME and
the deployment's `secrets:`), never as a run input; validate warns (by name) of a secret the
server's environment lacks; a refused run lists every blocker, each with its fix as a call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.mcp.projects import drive_tools

NODE = '''
from pydantic import BaseModel, Field

import wfops


class In(BaseModel):
    city: str
    api_token: str = Field(description="The weather service's key.")


class Out(BaseModel):
    forecast: str


@wfops.node
def forecast(payload: In) -> Out:
    return Out(forecast=f"sun in {payload.city} ({len(payload.api_token)} chars of token)")
'''
VALUE = "s3cr3t-value-for-the-test"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("API_TOKEN", raising=False)
    return write(tmp_path, {"sources.yaml": "sources:\n  weather: {kind: python, module: weather}\n",
                            "weather.py": NODE})


def _never_the_value(result: Any) -> None:
    assert VALUE not in result.content[0].text  # never a secret's value, whatever the call


def drive(root: Path, script: Any) -> None:
    drive_tools(root, script, _never_the_value)


def test_a_secret_is_scaffolded_by_reference_warned_about_and_listed_among_the_blockers(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def script(call: Any) -> None:
        described = await call("describe_capability", ref="weather.forecast")
        assert "`api_token` (as $secret.API_TOKEN)" in described["next_steps"][0]
        assert "env" in described["next_steps"][0]

        made = await call("new_workflow", capability="weather.forecast", name="weather", write=True)
        assert made["written"] is True
        assert '"api_token": $secret.API_TOKEN' in made["text"] and "$input.api_token" not in made["text"]
        assert '"city": $input.city' in made["text"]
        assert "api_token" not in made["text"].split("properties:")[1].split("\n")[0]  # not a run input
        deployment = next(a for a in made["next_actions"] if a["tool"] == "write_file")
        assert deployment["arguments"]["path"] == "deployments/weather.yaml"
        assert "secrets: [API_TOKEN]" in deployment["arguments"]["text"]
        assert (await call("write_file", **deployment["arguments"]))["written"] is True

        validated = await call("validate")
        [missing] = [d for d in validated["diagnostics"] if d["code"] == "secret-missing"]
        assert (missing["severity"], missing["file"], missing["deployment"]) == ("warning", "deployments/weather.yaml",
                                                                                 "weather.local")
        assert "API_TOKEN" in missing["message"] and "`env`" in missing["hint"]

        # the lock is stale (never compiled) and the secret is missing: both refuse, both are listed
        refused = await call("start_run", deployment="weather.local", input={"city": "Oslo"})
        assert refused["error"]["type"] == "RefusedError"
        codes = {d["code"] for d in refused["diagnostics"]}
        assert {"stale-lock", "secret-missing"} <= codes, codes
        tools = [a["tool"] for a in refused["next_actions"]]
        assert tools[0] == "compile" and tools[-1] == "start_run"
        assert refused["next_actions"][-1]["arguments"] == {"deployment": "weather.local"}

        assert (await call("compile"))["ok"] is True
        refused = await call("run_deployment", deployment="weather.local", input={"city": "Oslo"})
        assert [d["code"] for d in refused["diagnostics"]] == ["secret-missing"]
        assert "`env`" in refused["error"]["hint"] and "export" not in refused["error"]["hint"]

        monkeypatch.setenv("API_TOKEN", VALUE)  # as the client's server entry `env` would set it
        assert not [d for d in (await call("validate"))["diagnostics"] if d["code"] == "secret-missing"]
        ran = await call("run_deployment", deployment="weather.local", input={"city": "Oslo"})
        assert ran["run"]["state"] == "completed", ran
        assert ran["run"]["output"]["result"]["forecast"] == f"sun in Oslo ({len(VALUE)} chars of token)"

        monkeypatch.delenv("API_TOKEN")  # the server restarted without it: a fork is refused, told how to fix it
        forked = await call("fork_run", run_id=ran["run"]["run_id"], from_step="call")
        assert forked["error"]["type"] == "RefusedError" and "API_TOKEN" in forked["error"]["message"]
        assert "`env`" in forked["error"]["hint"] and "export" not in forked["error"]["hint"]

    drive(root, script)


@pytest.mark.slow  # starts a real MCP server
def test_a_destructive_capability_is_called_out_before_it_is_tried(tmp_path: Path) -> None:
    from tests.mcp.helpers import SERVERS

    root = write(tmp_path, {"sources.yaml": f"sources:\n  db: {{kind: mcp, command: [python, {SERVERS / 'annotated.py'}]}}\n"})

    async def script(call: Any) -> None:
        wipe = await call("describe_capability", ref="db.wipe")
        assert wipe["capability"]["annotations"]["destructiveHint"] is True
        [try_it] = [a for a in wipe["next_actions"] if a["tool"] == "call_capability"]
        assert "WARNING: it is annotated destructive" in try_it["reason"]
        peek = await call("describe_capability", ref="db.peek")
        assert "WARNING" not in " ".join(a["reason"] for a in peek["next_actions"])

    drive(root, script)


@pytest.mark.slow  # starts a real MCP server (compile lists it)
def test_a_deployment_calling_a_destructive_tool_carries_a_warning_from_the_lock(tmp_path: Path) -> None:
    from tests.mcp.helpers import SERVERS

    root = write(tmp_path, {
        "sources.yaml": f"sources:\n  db: {{kind: mcp, command: [python, {SERVERS / 'annotated.py'}]}}\n",
        "workflows/clean.yaml": "name: clean\nsteps:\n  - {id: wipe, uses: db.wipe, with: {table: t}, next: end}\n",
        "workflows/look.yaml": "name: look\nsteps:\n  - {id: peek, uses: db.peek, with: {table: t}, next: end}\n",
        "deployments/clean.yaml": "name: clean.local\nworkflow: clean\n",
        "deployments/look.yaml": "name: look.local\nworkflow: look\n"})

    async def script(call: Any) -> None:
        compiled = await call("compile")
        assert compiled["ok"], compiled
        runs = {a["arguments"]["deployment"]: a["reason"] for a in compiled["next_actions"] if a["tool"] == "start_run"}
        assert "WARNING: it calls db.wipe, annotated destructive" in runs["clean.local"]
        assert "WARNING" not in runs["look.local"]
        listed = await call("list_project")
        assert {d["name"]: d["destructive"] for d in listed["deployments"]} == {"clean.local": ["db.wipe"],
                                                                                "look.local": []}

    drive(root, script)
    # The lock records the hints (not part of the contract: the hash is the contract's alone).
    lock = json.loads((root / "wfops.lock").read_text())
    assert lock["sources"]["db"]["capabilities"]["wipe"]["annotations"]["destructiveHint"] is True
