"""Acceptance: `wfops compile` / `wfops check` on the documented weekly-report example,
driven through the real command line as users and CI do."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.harness import CliResult, run_cli
from tests.lock.weekly_project import weekly_project


def wfops(root: Path, *args: str) -> CliResult:
    done = run_cli(*args, cwd=root)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done


def check_json(root: Path) -> tuple[int, list[dict]]:
    done = wfops(root, "check", "--format", "json")
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0)
    return done.returncode, report["diagnostics"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


@pytest.fixture
def weekly(tmp_path: Path) -> Path:
    root = weekly_project(tmp_path / "weekly")
    assert wfops(root, "compile").returncode == 0
    return root


def test_spec_example_compiles_checks_and_runs(weekly: Path) -> None:
    assert check_json(weekly) == (0, [])
    done = wfops(weekly, "run", "weekly-report.local", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert (run["status"], run["outcome"]) == ("completed", "ok")
    assert run["output"]["markdown"] == "# Weekly sync\n- ship v1\n- write docs"
    lock = json.loads((weekly / "wfops.lock").read_text())
    assert run["artifact"] == lock["workflows"]["weekly-report"]["hash"]


def test_lock_shape_and_contract_hashes_follow_the_spec(weekly: Path) -> None:
    lock = json.loads((weekly / "wfops.lock").read_text())
    deployment = lock["deployments"]["weekly-report.local"]
    assert deployment["bindings"] == {"notes": "report"}
    assert deployment["artifact"] == lock["workflows"]["weekly-report"]["hash"]
    captured = lock["sources"]["report"]["capabilities"]
    assert set(captured) == {"read_notes", "extract_report", "render_markdown_report"}
    assert captured["extract_report"]["outcomes"] == ["ok", "empty"]
    assert captured["read_notes"]["description"] == "Read the notes file."
    for contract in captured.values():
        body = {k: contract[k] for k in ("input_schema", "output_schema", "outcomes")}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert contract["hash"] == hashlib.sha256(canonical.encode()).hexdigest()


def test_lock_is_byte_identical_across_runs_and_directories(weekly: Path, tmp_path: Path) -> None:
    first = (weekly / "wfops.lock").read_bytes()
    assert wfops(weekly, "compile").returncode == 0
    assert (weekly / "wfops.lock").read_bytes() == first
    elsewhere = shutil.copytree(weekly, tmp_path / "a" / "different" / "place")
    (elsewhere / "wfops.lock").unlink()
    assert wfops(elsewhere, "compile").returncode == 0
    assert (elsewhere / "wfops.lock").read_bytes() == first
    text = first.decode()
    assert text.endswith("\n") and str(weekly) not in text
    assert json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n" == text


def test_comments_and_formatting_keep_the_artifact(weekly: Path) -> None:
    workflow = weekly / "workflows/weekly-report.yaml"
    text = "\n".join(line.split("  #")[0].rstrip() for line in workflow.read_text().splitlines())
    text = text.replace("with: {path: $input.path}", 'with:\n      path: "$input.path"')
    workflow.write_text("# reformatted\n" + text + "\n")
    assert check_json(weekly) == (0, [])


def test_changed_step_is_stale_lock_at_the_step(weekly: Path) -> None:
    edit(weekly / "workflows/weekly-report.yaml", "timeout: 30 ", "timeout: 31 ")
    code, found = check_json(weekly)
    stale = [d for d in found if d["code"] == "stale-lock"]
    assert code == 1
    at_workflow = [d for d in stale if d["file"] == "workflows/weekly-report.yaml"]
    assert len(at_workflow) == 1 and "step `extract`" in at_workflow[0]["message"]
    assert (at_workflow[0]["line"], at_workflow[0]["column"]) == (23, 5)  # `- id: extract`


def test_contract_change_is_capability_drift_naming_the_field(weekly: Path) -> None:
    edit(weekly / "weekly/ops.py", "    items: list[str] = []", "    items: list[int] = []")
    code, found = check_json(weekly)
    drift = [d for d in found if d["code"] == "capability-drift"]
    assert code == 1 and drift
    assert "items" in drift[0]["message"] and drift[0]["file"] == "workflows/weekly-report.yaml"


def test_removed_node_is_capability_missing_and_removed_source_is_source_missing(weekly: Path) -> None:
    edit(weekly / "weekly/ops.py", "def render_markdown_report", "def render_md")
    code, found = check_json(weekly)
    assert code == 1 and "capability-missing" in [d["code"] for d in found]
    edit(weekly / "weekly/ops.py", "def render_md", "def render_markdown_report")
    edit(weekly / "deployments/weekly-report.local.yaml", "bindings: {notes: report}", "")
    edit(weekly / "workflows/weekly-report.yaml", "uses: notes.", "uses: report.")
    assert wfops(weekly, "compile").returncode == 0
    (weekly / "sources.yaml").write_text("sources: {}\n")
    code, found = check_json(weekly)
    assert code == 1 and "source-missing" in [d["code"] for d in found]


def test_compile_refuses_a_pin_that_does_not_match(weekly: Path) -> None:
    before = (weekly / "wfops.lock").read_bytes()
    edit(weekly / "deployments/weekly-report.local.yaml", "workflow: weekly-report ",
         "workflow: weekly-report@sha256:deadbeef ")
    done = wfops(weekly, "compile", "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert [(d["code"], d["file"], d["line"]) for d in report["diagnostics"]] == [
        ("pin-mismatch", "deployments/weekly-report.local.yaml", 2)]
    assert (weekly / "wfops.lock").read_bytes() == before  # nothing written


def test_compile_accepts_a_matching_pin_and_check_stays_clean(weekly: Path) -> None:
    artifact = json.loads((weekly / "wfops.lock").read_text())["workflows"]["weekly-report"]["hash"]
    edit(weekly / "deployments/weekly-report.local.yaml", "workflow: weekly-report ",
         f"workflow: weekly-report@sha256:{artifact[:10]} ")
    assert wfops(weekly, "compile").returncode == 0
    assert check_json(weekly) == (0, [])


@pytest.mark.parametrize("out", ["a-file", "a-file/below"])
def test_compile_out_that_cannot_be_a_directory_is_a_usage_error(weekly: Path, out: str) -> None:
    (weekly / "a-file").write_text("x")
    before = (weekly / "wfops.lock").read_bytes()
    (weekly / "wfops.lock").unlink()
    done = wfops(weekly, "compile", "--out", out)
    assert done.returncode == 2
    assert done.stderr.startswith(f"wfops: error: --out {out}:")
    assert not (weekly / "wfops.lock").exists()  # refused before writing anything
    (weekly / "wfops.lock").write_bytes(before)


def test_compile_out_writes_verifiable_artifacts(weekly: Path) -> None:
    done = wfops(weekly, "compile", "--out", "dist/artifacts")
    assert done.returncode == 0, done.stderr
    artifact = json.loads((weekly / "dist/artifacts/weekly-report.json").read_text())
    body = {"workflow": artifact["workflow"], "subworkflows": artifact["subworkflows"]}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(canonical.encode()).hexdigest() == artifact["hash"]


def test_corrupt_lock_is_one_code_in_validate_and_check(weekly: Path) -> None:
    # An MCP source makes validate read the lock too (for its contracts).
    edit(weekly / "sources.yaml", "sources:\n", "sources:\n  clock: {kind: mcp, command: [python, -m, nothing]}\n")
    (weekly / "wfops.lock").write_text("garbage\n")
    validated = wfops(weekly, "validate", "--format", "json")
    assert [d["code"] for d in json.loads(validated.stdout)["diagnostics"]] == ["corrupt-lock"]
    code, found = check_json(weekly)
    assert code == 1 and [(d["code"], d["file"], d["line"]) for d in found] == [("corrupt-lock", "wfops.lock", 1)]


def test_mcp_compile_tool_refuses_a_pin_mismatch_like_the_cli(weekly: Path) -> None:
    from wfops.api import Project
    from wfops.mcpserver.operations import compile_lock
    from wfops.sources.python import forget_project_modules

    before = (weekly / "wfops.lock").read_bytes()
    edit(weekly / "deployments/weekly-report.local.yaml", "workflow: weekly-report ",
         "workflow: weekly-report@sha256:deadbeef ")
    try:
        result = compile_lock(Project(weekly))
    finally:
        forget_project_modules(weekly)
    assert result.ok is False
    assert [d.code for d in result.diagnostics] == ["pin-mismatch"]
    assert (weekly / "wfops.lock").read_bytes() == before


def test_capability_drift_says_which_keywords_changed(weekly: Path) -> None:
    edit(weekly / "weekly/ops.py", 'path: str = Field(description="Notes file, relative to the project root.")',
         'path: str = Field(description="Notes file, relative to the project root.", min_length=1)')
    edit(weekly / "weekly/ops.py", "    items: list[str] = []", '    items: list[str] = ["x"]')
    code, found = check_json(weekly)
    messages = {d["message"].split(" changed since")[0]: d["message"] for d in found
                if d["code"] == "capability-drift"}
    assert code == 1
    assert "input field `path` schema: `minLength` added (1)" in messages["report.read_notes"]
    # A nested model (pydantic `$defs`) is described field by field too.
    assert 'input model `Report` field `items` schema: `default` [] -> ["x"]' in \
        messages["report.render_markdown_report"]
    assert 'output field `items` schema: `default` [] -> ["x"]' in messages["report.extract_report"]


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_declared_but_unused_mcp_servers_do_not_block_compile(weekly: Path) -> None:
    # The documented sources.yaml example declares MCP servers no workflow of this project calls.
    port = _closed_port()
    (weekly / "sources.yaml").write_text(
        "sources:\n"
        "  report: {kind: python, module: weekly.ops}\n"
        "  clock:\n    kind: mcp\n    command: [python, -m, no_such_mcp_server_module]\n    env: {TZ: UTC}\n"
        f"  remote:\n    kind: mcp\n    url: http://127.0.0.1:{port}/mcp\n")
    compiled = wfops(weekly, "compile")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert set(json.loads((weekly / "wfops.lock").read_text())["sources"]) == {"report"}
    assert check_json(weekly) == (0, [])
    assert wfops(weekly, "check", "--live").returncode == 0
    # Once a workflow calls one, it is contacted, and a server that is not there is a finding.
    (weekly / "workflows/remote.yaml").write_text(
        "name: remote\nsteps:\n  - id: call\n    uses: remote.anything\n    with: {}\n    next: end\n")
    refused = wfops(weekly, "compile", "--format", "json")
    assert refused.returncode == 1
    found = json.loads(refused.stdout)["diagnostics"]
    assert [(d["code"], d["file"]) for d in found] == [("source-unavailable", "sources.yaml")]
    assert "'remote'" in found[0]["message"]


def test_a_broken_workflow_is_reported_once_not_also_as_a_changed_deployment(weekly: Path) -> None:
    edit(weekly / "workflows/weekly-report.yaml", "\nsteps:", "\nstepz:")
    code, found = check_json(weekly)
    assert code == 1
    assert {d["code"] for d in found} == {"missing-key", "unknown-key"}
    assert all(d["file"] == "workflows/weekly-report.yaml" for d in found)
