"""The real `pre-commit run` of the published `wfops-check` hook in a fresh git repository.

pre-commit builds a virtualenv from this repository (`pip install .`, PyPI for the
dependencies) at its committed HEAD: half-done work in the tree cannot break it. The
build (~10 s) is shared by every test of the session that runs the hooks with the same
`additional_dependencies` (the `pre_commit_home` fixture); the tests that run hooks
share one xdist group, so one never waits while the other builds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, write
from tests.harness import run_cli
from tests.lock.conftest import FILES

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pre-commit"), pytest.mark.skipif(
    shutil.which("pre-commit") is None or shutil.which("git") is None,
    reason="needs pre-commit and git on PATH (pip install -e '.[test]')")]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def hook_config(hook: str, extra: str = "") -> str:
    """A `.pre-commit-config.yaml` taking `hook` from this repository's committed HEAD."""
    return (f"repos:\n  - repo: {REPO}\n    rev: {git(REPO, 'rev-parse', 'HEAD')}\n    hooks:\n"
            f"      - id: {hook}\n{extra}")


def pre_commit(root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)  # the hook's own virtualenv, nothing from this process
    return subprocess.run(["pre-commit", "run", "--all-files"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


def test_wfops_check_hook_passes_a_fresh_lock_and_blocks_a_stale_one(tmp_path: Path, pre_commit_home: Path) -> None:
    root = write(tmp_path / "repo", {**FILES, ".pre-commit-config.yaml": hook_config("wfops-check")})
    compiled = run_cli("compile", "--project", str(root))
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "a wfops project")

    fresh = pre_commit(root, pre_commit_home)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "wfops check" in fresh.stdout and "Passed" in fresh.stdout

    workflow = root / "workflows/loud.yaml"
    workflow.write_text(workflow.read_text().replace("on: {ok: end, empty: end}",
                                                     "on: {ok: end, empty: end}\n    timeout: 9"))
    git(root, "add", ".")
    stale = pre_commit(root, pre_commit_home)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout and "stale-lock" in stale.stdout
    assert "workflows/loud.yaml" in stale.stdout
