"""Acceptance: the four output formats, including a project in a subdirectory of the
checkout, where GitHub annotations and SARIF must name files from the checkout root."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import write
from tests.harness import CliResult, run_cli

BROKEN = "name: w\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    next: nowhere\n"


def wfops(cwd: Path, *args: str, workspace: Path | None = None) -> CliResult:
    done = run_cli(*args, cwd=cwd, env={"GITHUB_WORKSPACE": str(workspace) if workspace else None})
    assert "Traceback" not in done.stderr
    return done


def checkout(tmp_path: Path) -> Path:
    write(tmp_path / "repo", {"services/flows/sources.yaml": "sources: {}\n",
                              "services/flows/workflows/w.yaml": BROKEN})
    return tmp_path / "repo"


def test_every_format_at_the_project_root(tmp_path: Path) -> None:
    root = checkout(tmp_path) / "services/flows"
    text = wfops(root, "validate")
    assert text.returncode == 1
    assert text.stdout.splitlines()[:2] == [
        "workflows/w.yaml:6:11: error[unknown-target] step `a` routes outcome `ok` to `nowhere`, "
        "which is not a step of this workflow",
        "  hint: route to a step id, or to `end`; choices: `a`"]
    report = json.loads(wfops(root, "validate", "--format", "json").stdout)
    assert set(report) == {"ok", "diagnostics"} and report["ok"] is False
    assert set(report["diagnostics"][0]) == {"severity", "code", "message", "file", "line", "column", "hint"}
    github = wfops(root, "validate", "--format", "github").stdout.splitlines()[0]
    assert github.startswith("::error file=workflows/w.yaml,line=6,col=11,title=wfops unknown-target::")


def test_github_and_sarif_name_files_from_the_checkout(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    for args in (["validate"], ["check"]):
        github = wfops(repo, *args, "--project", "services/flows", "--format", "github")
        assert github.returncode == 1
        assert "::error file=services/flows/workflows/w.yaml,line=6,col=11," in github.stdout
    sarif = json.loads(wfops(repo, "validate", "--project", "services/flows", "--format", "sarif").stdout)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "services/flows/workflows/w.yaml"
    # A step with `working-directory:` inside the project: GITHUB_WORKSPACE is the checkout.
    inside = wfops(repo / "services/flows/workflows", "validate", "--format", "github", workspace=repo)
    assert "::error file=services/flows/workflows/w.yaml,line=6,col=11," in inside.stdout
    # Text and JSON stay project-relative.
    plain = json.loads(wfops(repo, "validate", "--project", "services/flows", "--format", "json").stdout)
    assert plain["diagnostics"][0]["file"] == "workflows/w.yaml"


def test_local_state_is_git_ignored_in_any_repository(tmp_path: Path) -> None:
    root = checkout(tmp_path) / "services/flows"
    subprocess.run(["git", "init", "-q"], cwd=tmp_path / "repo", check=True)
    wfops(root, "validate")  # writes the validate cache under .wfops/
    assert (root / ".wfops/.gitignore").read_text().endswith("*\n")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path / "repo",
                            capture_output=True, text=True, check=True).stdout
    assert ".wfops" not in status and "services/flows/workflows/w.yaml" in status


def test_workflows_as_a_file_is_reported_and_fixing_it_clears_the_cache(tmp_path: Path) -> None:
    root = write(tmp_path / "p", {"sources.yaml": "sources: {}\n", "workflows": "not a directory\n"})
    done = wfops(root, "validate")
    assert done.returncode == 1 and done.stdout.startswith("workflows:1:1: error[file-unreadable] workflows is a file")
    (root / "workflows").unlink()
    again = wfops(root, "validate")
    assert (again.returncode, again.stdout.strip()) == (0, "ok: no problems")
