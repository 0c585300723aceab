"""Every worked example runs end to end through the real CLI (a copy of the repo's project)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.everyday.helpers import REPO
from tests.harness import process_env, run_cli, wait_for


@pytest.fixture
def project(examples_project: Path) -> Path:
    return examples_project


def run(project: Path, *args: str) -> tuple[int, dict]:
    proc = run_cli("run", *args, "--json", "--db", str(project / "runs.db"), cwd=project)
    return proc.returncode, proc.json()


def test_meeting_report(project: Path) -> None:
    code, result = run(project, "meeting-report.local")
    assert code == 0 and result["status"] == "completed" and result["outcome"] == "ok"
    report = result["output"]["report"]
    assert report["title"] == "Platform weekly sync" and report["date"] == "2026-11-23"
    assert report["attendees"] == ["Ana", "Bruno", "Chen", "Dara"]
    assert len(report["decisions"]) == 3
    assert [(a["owner"], a["done"]) for a in report["action_items"]] == [
        ("Ana", False), ("bruno", False), ("Chen", True), (None, False)]
    assert report["action_items"][0]["due"] == "2026-11-26"
    markdown = result["output"]["markdown"]
    assert markdown.startswith("# Platform weekly sync\n") and "## Action items" in markdown
    assert result["output"]["log"] == ["read 19 lines from examples/report/input.md",
                                       "rendered 3 decisions and 4 action items"]


def test_meeting_report_empty_notes_end_in_empty(project: Path) -> None:
    code, result = run(project, "meeting-report.local", "--input", "path=examples/report/empty.md")
    assert code == 0 and result["status"] == "completed" and result["outcome"] == "empty"
    assert result["output"]["markdown"] is None


@pytest.mark.parametrize("path", ["../outside.md", "/etc/hostname", "examples/../../outside.md"])
def test_meeting_report_refuses_paths_outside_the_project(project: Path, path: str) -> None:
    (project.parent / "outside.md").write_text("# Secret\n## Decisions\n- leak\n")
    code, result = run(project, "meeting-report.local", "--input", f"path={path}")
    assert code == 1 and result["status"] == "failed"
    assert "relative to the project root" in result["error"]["message"] or \
        "outside the project" in result["error"]["message"]


def test_meeting_report_refuses_a_symlink_out_of_the_project(project: Path) -> None:
    (project.parent / "outside.md").write_text("# Secret\n## Decisions\n- leak\n")
    link = project / "examples" / "report" / "link.md"
    link.unlink(missing_ok=True)
    link.symlink_to(project.parent / "outside.md")
    code, result = run(project, "meeting-report.local", "--input", "path=examples/report/link.md")
    assert code == 1 and "outside the project" in result["error"]["message"]


def test_approval_interrupts_and_resumes(project: Path) -> None:
    db = str(project / "runs.db")
    code, result = run(project, "approval.local")
    assert code == 3 and result["status"] == "interrupted"
    assert result["interrupt"]["kind"] == "approval" and result["interrupt"]["step"] == "ask"
    assert result["interrupt"]["request"]["change"] == "Deploy wfops v1 to production"
    refused = run_cli("resume", result["run_id"], "--outcome", "approved", "--payload", '{"who": "ana"}',
                      "--json", "--db", db, cwd=project)
    assert refused.returncode == 2
    done = run_cli("resume", result["run_id"], "--outcome", "approved", "--payload", '{"by": "ana"}',
                   "--json", "--db", db, cwd=project)
    assert done.returncode == 0, done.stderr
    final = done.json()
    assert final["status"] == "completed" and final["outcome"] == "ok"
    assert final["output"]["message"] == "Approved by ana: Deploy wfops v1 to production"


def test_approval_rejected(project: Path) -> None:
    db = str(project / "runs.db")
    _, result = run(project, "approval.local", "--input", "change=Drop the prod database")
    done = run_cli("resume", result["run_id"], "--outcome", "rejected",
                   "--payload", '{"by": "bruno", "comment": "no"}', "--json", "--db", db, cwd=project)
    final = done.json()
    assert done.returncode == 0 and final["outcome"] == "rejected"
    assert final["output"]["message"] == "Rejected by bruno: Drop the prod database"


def test_fanout_collects_the_failed_item(project: Path) -> None:
    code, result = run(project, "fanout.local")
    assert code == 0 and result["status"] == "completed" and result["outcome"] == "partial"
    output = result["output"]
    assert [g["text"] for g in output["greetings"] if g] == ["Hi Ana!", "Hi Bruno!", "Hi Chen!", "Hi Dara!", "Hi Eve!"]
    assert [(f["index"], f["message"]) for f in output["failures"]] == [(2, "cannot greet a blank name")]
    assert output["summary"] == "Some greetings failed; the first, item 2: cannot greet a blank name"


def test_fanout_all_good_and_formal(project: Path) -> None:
    names = json.dumps([f"n{i}" for i in range(9)])
    code, result = run(project, "fanout.local", "--input", f"names={names}", "--input", "formal=true")
    assert code == 0 and result["outcome"] == "ok"
    assert [g["text"] for g in result["output"]["greetings"]] == [f"Good day, n{i}." for i in range(9)]
    assert result["output"]["summary"] == "Greeted everyone on the list."


def test_repo_examples_validate_cleanly() -> None:
    proc = run_cli("validate", "--format", "json", cwd=REPO)
    found = proc.json()
    assert proc.returncode == 0 and found["ok"], found
    mine = [d for d in found["diagnostics"] if d["file"].startswith(("workflows/", "deployments/"))
            and "world-clock" not in d["file"]]
    assert mine == []


@pytest.fixture
def repo_examples(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The repo's own `examples` package importable, and forgotten afterwards: the tests that
    run a copied project (in this process) import their own `examples`."""
    monkeypatch.syspath_prepend(str(REPO))
    yield
    for name in [n for n in sys.modules if n == "examples" or n.startswith("examples.")]:
        del sys.modules[name]


def test_notes_parser_variants(repo_examples: None) -> None:
    from examples.report.ops import parse_notes

    report = parse_notes("no title here\n## TODO:\n* [X] @dev ship it (due: Friday)\n1. Ana Lopez: plan\n"
                         "## Other\n- ignored\n### Decisions\n- keep it\n")
    assert report.title == "Untitled meeting" and report.decisions == ["keep it"]
    assert [(a.owner, a.task, a.due, a.done) for a in report.action_items] == [
        ("dev", "ship it", "Friday", True), ("Ana Lopez", "plan", None, False)]
    assert parse_notes("").action_items == [] and parse_notes("").decisions == []


def test_fresh_clone_promise_run_meeting_report_from_the_repo(tmp_path: Path) -> None:
    """The README's first command: the committed wfops.lock must be fresh for the examples."""
    proc = run_cli("run", "meeting-report.local", "--json", "--db", str(tmp_path / "runs.db"), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.json()["outcome"] == "ok"


@pytest.mark.slow  # runs the example's script
def test_wordcount_runs_the_repository_script(project: Path) -> None:
    code, result = run(project, "wordcount.local")
    assert code == 0 and result["outcome"] == "ok", result
    assert result["output"]["summary"] == "examples/report/input.md: 102 words on 19 lines"
    (project / "blank.txt").write_text("  \n\n")
    code, result = run(project, "wordcount.local", "--input", "path=blank.txt")
    assert code == 0 and result["outcome"] == "empty", result


@pytest.mark.slow  # starts the example's API server
def test_catalog_lookup_calls_the_example_api_with_its_token(project: Path) -> None:
    token = "catalog-example-token-42"
    server = subprocess.Popen([sys.executable, str(project / "examples/catalog/server.py")],
                              env=process_env({"CATALOG_TOKEN": token, "CATALOG_PORT": "8765"}))
    try:
        wait_for(lambda: _listening(8765), what="the catalog server")
        env = {"CATALOG_TOKEN": token}
        proc = run_cli("run", "catalog-lookup.local", "--json", "--db", str(project / "runs.db"), cwd=project, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.json()["output"]["line"] == "Desk lamp: 24.0 EUR"
        proc = run_cli("run", "catalog-lookup.local", "--input", "sku=NOPE-1", "--json", "--db",
                       str(project / "runs.db"), cwd=project, env=env)
        assert proc.json()["outcome"] == "not_found"
        assert token not in proc.stdout + proc.stderr
    finally:
        server.terminate()
        server.wait(10)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True
