"""`wfops caps list|show|call`: std, python and MCP sources (live only when named)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import cli
from wfops.sources.python import forget_project_modules

NODES = '''
from pydantic import BaseModel, Field
import wfops

class In(BaseModel):
    n: int = Field(description="A number.")

class Out(BaseModel):
    doubled: int

@wfops.node(outcomes=["ok", "zero"])
def double(payload: In) -> wfops.Result[Out]:
    """Double a number.

    Ends in `zero` for 0."""
    if payload.n == 0:
        return wfops.Result(outcome="zero")
    if payload.n < 0:
        raise ValueError("negative numbers are not welcome")
    return wfops.Result(output=Out(doubled=2 * payload.n))
'''

LOCK = {"version": 1, "workflows": {}, "deployments": {}, "sources": {"ghost": {"kind": "mcp", "capabilities": {
    "haunt": {"input_schema": {"type": "object"}, "output_schema": {"type": "object"}, "outcomes": ["ok"],
              "description": "Haunt a house.", "hash": "x"}}}}}


@pytest.fixture
def project(make_project) -> Iterator[Path]:
    root = make_project({
        "sources.yaml": """
            sources:
              calc: {kind: python, module: nodes}
              ghost: {kind: mcp, command: [/nonexistent/ghost-server]}
              unlocked: {kind: mcp, command: [/nonexistent/other-server]}
              clock: {kind: mcp, command: [python, -m, mcp_server_time, --local-timezone, UTC]}
            """,
        "nodes.py": NODES,
    })
    (root / "wfops.lock").write_text(json.dumps(LOCK))
    yield root
    # In-process runs share sys.modules: the next test's `nodes` lives in another directory.
    forget_project_modules(root)


def test_list_reads_mcp_from_the_lock_without_starting_servers(project: Path, capsys) -> None:
    assert cli("caps", "list", "--project", str(project)) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("std.echo ")
    assert any(line.startswith("calc.double ") and "Double a number  [ok, zero]" in line for line in lines)
    assert any(line.startswith("ghost.haunt ") and line.endswith("(from wfops.lock)") for line in lines)
    assert "note: unlocked: MCP source not in wfops.lock" in err
    assert "note: clock: MCP source not in wfops.lock" in err


def test_list_json(project: Path, capsys) -> None:
    assert cli("caps", "list", "--json", "--project", str(project)) == 0
    entries = {e["ref"]: e for e in json.loads(capsys.readouterr().out)}
    assert {"std.echo", "std.fail", "std.sleep", "std.format", "calc.double", "ghost.haunt"} <= set(entries)
    assert entries["ghost.haunt"]["origin"] == "lock" and entries["calc.double"]["origin"] == "live"
    assert entries["calc.double"]["outcomes"] == ["ok", "zero"]
    assert len(entries["std.echo"]["contract_hash"]) == 64


def test_list_one_source(project: Path, capsys) -> None:
    assert cli("caps", "list", "--source", "calc", "--json", "--project", str(project)) == 0
    assert [e["ref"] for e in json.loads(capsys.readouterr().out)] == ["calc.double"]
    assert cli("caps", "list", "--source", "nope", "--project", str(project)) == 1
    assert "unknown source 'nope'" in capsys.readouterr().err


def test_naming_a_broken_mcp_source_fails_cleanly(project: Path, capsys) -> None:
    assert cli("caps", "list", "--source", "ghost", "--project", str(project)) == 1
    err = capsys.readouterr().err
    assert err.startswith("wfops: error: ") and "ghost" in err and "Traceback" not in err


def test_show(project: Path, capsys) -> None:
    assert cli("caps", "show", "calc.double", "--project", str(project)) == 0
    out = capsys.readouterr().out
    assert out.startswith("calc.double\n\n  Double a number.\n\n  Ends in `zero` for 0.\n")
    assert "outcomes:      ok, zero" in out and "contract hash: " in out
    assert '"description": "A number."' in out and "output schema:" in out
    assert cli("caps", "show", "std.format", "--json", "--project", str(project)) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["input_schema"]["required"] == ["template", "values"]
    assert shown["output_schema"]["properties"] == {"text": {"type": "string"}}
    for bad, message in (("calc.nope", "has no capability 'nope'"), ("nodot", "is not a capability ref"),
                         ("zzz.x", "unknown source 'zzz'")):
        assert cli("caps", "show", bad, "--project", str(project)) == 1
        assert message in capsys.readouterr().err


def test_call(project: Path, tmp_path: Path, capsys) -> None:
    def call(ref: str, text: str, name: str = "in.yaml") -> int:
        (tmp_path / name).write_text(text)
        return cli("caps", "call", ref, "--input-file", str(tmp_path / name), "--project", str(project))

    assert call("calc.double", "n: 21\n") == 0
    assert json.loads(capsys.readouterr().out) == {"outcome": "ok", "output": {"doubled": 42}}
    assert call("calc.double", '{"n": 0}', "in.json") == 0
    assert json.loads(capsys.readouterr().out) == {"outcome": "zero", "output": None}
    assert call("calc.double", "n: -1\n") == 1
    assert "calc.double failed: ValueError: negative numbers are not welcome" in capsys.readouterr().err
    assert call("std.format", "template: 3\nvalues: {}\n") == 1
    assert "`template` must be a string, got 3" in capsys.readouterr().err  # as a run reports it
    assert call("std.fail", "message: on purpose\n") == 1
    assert "std.fail failed: on purpose" in capsys.readouterr().err
    assert call("calc.double", "- 1\n") == 2
    assert "must be a mapping" in capsys.readouterr().err
    assert call("calc.double", "{", "bad.json") == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert cli("caps", "call", "calc.double", "--input-file", str(tmp_path / "missing.json"),
               "--project", str(project)) == 2


@pytest.mark.slow  # starts its own MCP server process(es)
def test_mcp_source_named_explicitly_is_started(project: Path, tmp_path: Path, capsys) -> None:
    assert cli("caps", "list", "--source", "clock", "--json", "--project", str(project)) == 0
    refs = {e["ref"]: e for e in json.loads(capsys.readouterr().out)}
    assert {"clock.get_current_time", "clock.convert_time"} <= set(refs)
    assert refs["clock.convert_time"]["origin"] == "live"
    assert refs["clock.convert_time"]["annotations"]["readOnlyHint"] is True  # what the tool declares
    assert cli("caps", "show", "clock.get_current_time", "--project", str(project)) == 0
    assert "annotations:   readOnlyHint true, destructiveHint false" in capsys.readouterr().out
    (tmp_path / "in.json").write_text(json.dumps(
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"}))
    assert cli("caps", "call", "clock.convert_time", "--input-file", str(tmp_path / "in.json"),
               "--project", str(project)) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["outcome"] == "ok" and result["output"]["time_difference"] == "+5.5h"
