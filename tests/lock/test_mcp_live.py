"""MCP contracts: snapshotted by compile, read from the lock by check, contacted only with --live."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import cli

SERVER = Path(__file__).parent / "servers" / "shifty.py"


@pytest.fixture
def mcp_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    starts = tmp_path / "starts.log"
    monkeypatch.setenv("SHIFTY_STARTS", str(starts))
    return write(tmp_path / "proj", {
        "sources.yaml": f"""
            sources:
              shifty:
                kind: mcp
                command: [{json.dumps(sys.executable)}, {json.dumps(str(SERVER))}]
                env:
                  SHIFTY_STARTS: {json.dumps(str(starts))}
                  SHIFTY_TYPE_FILE: {json.dumps(str(tmp_path / "type"))}
            """,
        "workflows/add.yaml": """
            name: add
            steps:
              - id: add
                uses: shifty.add
                with: {amount: 3}
                next: end
            """,
    })


def starts(root: Path) -> int:
    log = root.parent / "starts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.slow  # starts its own MCP server process(es)
def test_compile_snapshots_check_reads_the_lock_and_live_sees_drift(mcp_project: Path, capsys) -> None:
    assert cli("compile", "--project", str(mcp_project)) == 0
    assert starts(mcp_project) == 1
    lock = json.loads((mcp_project / "wfops.lock").read_text())
    add = lock["sources"]["shifty"]["capabilities"]["add"]
    assert lock["sources"]["shifty"]["kind"] == "mcp"
    assert add["input_schema"]["properties"]["amount"]["type"] == "integer"

    capsys.readouterr()
    assert cli("check", "--project", str(mcp_project)) == 0
    assert starts(mcp_project) == 1  # not contacted without --live

    (mcp_project.parent / "type").write_text("str")  # the server changes under us
    assert cli("check", "--project", str(mcp_project)) == 0  # the lock still vouches for it
    capsys.readouterr()
    assert cli("check", "--project", str(mcp_project), "--live", "--format", "json") == 1
    assert starts(mcp_project) == 2
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    drift = [d for d in found if d["code"] == "capability-drift"]
    assert drift and "input field `amount` type integer -> string" in drift[0]["message"]
    assert (drift[0]["file"], drift[0]["line"]) == ("workflows/add.yaml", 4)


def test_unknown_mcp_contract_is_an_error_in_check(mcp_project: Path, capsys) -> None:
    assert cli("check", "--project", str(mcp_project), "--format", "json") == 1
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    unknown = [d for d in found if d["code"] == "contract-unknown"]
    assert unknown and unknown[0]["severity"] == "error"
    assert starts(mcp_project) == 0


@pytest.mark.slow  # starts its own MCP server process(es)
def test_live_check_of_a_server_that_will_not_start_reports_that_alone(mcp_project: Path, capsys) -> None:
    assert cli("compile", "--project", str(mcp_project)) == 0
    sources = mcp_project / "sources.yaml"
    sources.write_text(sources.read_text().replace(json.dumps(str(SERVER)), json.dumps(str(SERVER) + ".gone")))
    capsys.readouterr()
    assert cli("check", "--live", "--format", "json", "--project", str(mcp_project)) == 1
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert "source-unavailable" in codes
    assert "stale-lock" not in codes  # the lock is not what is wrong
