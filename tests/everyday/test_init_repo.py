"""`wfops init` in git repositories, driven through the real `git` and `pre-commit`: a
project in a subdirectory, an existing pre-commit config; the scaffolded CI workflow
against GitHub's workflow schema."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_smoke import SCRIPT
from tests.harness import REPO, process_env, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    shutil.which("pre-commit") is None or shutil.which("git") is None or SCRIPT is None,
    reason="needs git, pre-commit and the wfops console script (pip install -e '.[test]')")]


def env(tmp_path: Path) -> dict[str, str]:
    # `language: system` hooks run the `wfops` on PATH: the one installed beside this
    # interpreter, importing this checkout (process_env puts it first on the path).
    assert SCRIPT is not None
    path = os.pathsep.join([str(Path(SCRIPT).parent), os.environ.get("PATH", "")])
    return process_env({"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PRE_COMMIT_COLOR": "never",
                        "PATH": path, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def sh(root: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=root, env=env(tmp_path), capture_output=True, text=True, timeout=300)


def test_project_in_a_subdirectory_commits_through_the_printed_pre_commit_install(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert sh(repo, tmp_path, "git", "init", "-q").returncode == 0
    made = run_cli("init", "flows/ops", cwd=repo)
    assert made.code == 0, made.stderr
    assert "pre-commit install" in made.stdout and "flows/ops" in made.stdout
    assert (repo / ".pre-commit-config.yaml").is_file() and not (repo / "flows/ops/.pre-commit-config.yaml").exists()
    assert (repo / ".github/workflows/wfops-flows-ops.yml").is_file()
    assert run_cli("compile", cwd=repo / "flows/ops").code == 0
    assert sh(repo, tmp_path, "pre-commit", "install").returncode == 0
    assert sh(repo, tmp_path, "git", "add", "-A").returncode == 0
    commit = sh(repo, tmp_path, "git", "commit", "-qm", "a wfops project in a subdirectory")
    assert commit.returncode == 0, commit.stdout + commit.stderr
    for hook in ("wfops validate", "wfops check", "wfops test"):
        assert hook in commit.stderr and "no wfops project" not in commit.stdout + commit.stderr

    workflow = repo / "flows/ops/workflows/hello.yaml"
    workflow.write_text(workflow.read_text().replace("next: decorate", "next: nowhere"))
    sh(repo, tmp_path, "git", "add", "-A")
    blocked = sh(repo, tmp_path, "git", "commit", "-qm", "a broken route")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "unknown-target" in blocked.stderr and "workflows/hello.yaml" in blocked.stderr
    # A file outside the project does not wake the hooks.
    workflow.write_text(workflow.read_text().replace("next: nowhere", "next: decorate"))
    (repo / "notes.yaml").write_text("a: 1\n")
    sh(repo, tmp_path, "git", "add", "-A")
    outside = sh(repo, tmp_path, "git", "commit", "-qm", "a file outside the project")
    assert outside.returncode == 0, outside.stdout + outside.stderr
    assert outside.stderr.count("(no files to check)Skipped") == 3


EXISTING = """\
# The team's hooks: keep them.
repos:
  - repo: local   # our own checks
    hooks:
      - id: no-todo
        name: no TODO markers
        entry: "true"
        language: system
        pass_filenames: false
"""


def test_existing_pre_commit_config_gets_the_hooks_added_with_its_comments(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    sh(repo, tmp_path, "git", "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(EXISTING)
    made = run_cli("init", ".", cwd=repo)
    assert made.code == 0, made.stderr
    assert "Added wfops's entries to the existing" in made.stdout
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert config.startswith(EXISTING)  # the user's text, comments and hook untouched
    assert config.count("id: wfops-validate") == config.count("id: wfops-check") == 1
    assert "--project" not in config  # the project is the repository root
    validated = sh(repo, tmp_path, "pre-commit", "validate-config", ".pre-commit-config.yaml")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert run_cli("compile", cwd=repo).code == 0
    sh(repo, tmp_path, "git", "add", "-A")
    ran = sh(repo, tmp_path, "pre-commit", "run", "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "no TODO markers" in ran.stdout and "wfops check" in ran.stdout

    # Again, with --force: the scaffold's files are rewritten, the hooks are not added twice.
    assert run_cli("init", ".", "--force", cwd=repo).code == 0
    assert (repo / ".pre-commit-config.yaml").read_text() == config


def test_a_config_that_cannot_take_hooks_is_named_with_what_to_add(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".pre-commit-config.yaml").write_text("- just a list\n")
    refused = run_cli("init", str(tmp_path))
    assert refused.code == 2
    assert "has no `repos:` list; nothing was written" in refused.stderr
    assert "id: wfops-validate" in refused.stderr  # the hint holds the entry to paste
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", ".pre-commit-config.yaml"]


def test_scaffolded_ci_workflows_match_githubs_workflow_schema(tmp_path: Path) -> None:
    checker = shutil.which("check-jsonschema")
    assert checker, "check-jsonschema is a test dependency (pip install -e '.[test]')"
    (tmp_path / ".git").mkdir()
    assert run_cli("init", str(tmp_path / "a")).code == 0
    assert run_cli("init", str(tmp_path)).code == 0  # a second project, at the root
    files = sorted((tmp_path / ".github/workflows").glob("*.yml"))
    assert [f.name for f in files] == ["wfops-a.schedule.yml", "wfops-a.yml", "wfops.schedule.yml", "wfops.yml"]
    proc = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", *map(str, files),
                           str(REPO / ".github/workflows/ci.yml")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
