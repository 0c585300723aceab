"""`wfops check` says what it verified: how many workflows, deployments and capability
contracts it compared with wfops.lock, and which MCP servers it contacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import run_cli
from wfops.api import Project


def test_check_counts_what_it_compared(examples_project: Path) -> None:
    lock = json.loads((examples_project / "wfops.lock").read_text())
    contracts = sum(len(s["capabilities"]) for s in lock["sources"].values())
    workflows, deployments = len(lock["workflows"]), len(lock["deployments"])
    done = run_cli("check", cwd=examples_project)
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "ok: no problems",
        f"checked {workflows} workflows, {deployments} deployments and {contracts} capability contracts against wfops.lock; "
        "no MCP server contacted (their contracts as wfops.lock holds them; --live asks the servers)"]
    verified = Project(examples_project).check().verified
    assert verified == {"workflows": workflows, "deployments": deployments, "contracts": contracts,
                        "mcp_servers_contacted": []}
    as_json = run_cli("check", "--format", "json", cwd=examples_project)
    assert as_json.code == 0 and json.loads(as_json.stdout)["ok"] is True  # one JSON document, nothing after


@pytest.mark.slow
def test_check_live_names_the_servers_it_contacted(examples_project: Path) -> None:
    done = run_cli("check", "--live", cwd=examples_project)
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].endswith("against wfops.lock; MCP servers contacted: clock")
