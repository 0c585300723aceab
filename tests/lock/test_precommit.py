"""The real `pre-commit try-repo <this repo> wfops-check` in a fresh git repository.

pre-commit builds a virtualenv from this repository (`pip install .`, PyPI for the
dependencies); with a warm pip cache this takes about 10 s per run.
It installs the committed HEAD (`--ref HEAD`): without a ref, try-repo snapshots
tracked edits but not new files, so half-done work in the tree would break it.
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

pytestmark = pytest.mark.slow


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


def try_repo(root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["pre-commit", "try-repo", str(REPO), "wfops-check", "--ref", "HEAD", "--all-files"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None,
                    reason="needs pre-commit and git on PATH (pip install -e '.[test]')")
def test_wfops_check_hook_passes_a_fresh_lock_and_blocks_a_stale_one(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", FILES)
    compiled = run_cli("compile", "--project", str(root))
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "a wfops project")

    fresh = try_repo(root, tmp_path / "pre-commit-home")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "wfops check" in fresh.stdout and "Passed" in fresh.stdout

    workflow = root / "workflows/loud.yaml"
    workflow.write_text(workflow.read_text().replace("on: {ok: end, empty: end}",
                                                     "on: {ok: end, empty: end}\n    timeout: 9"))
    git(root, "add", ".")
    stale = try_repo(root, tmp_path / "pre-commit-home")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout and "stale-lock" in stale.stdout
    assert "workflows/loud.yaml" in stale.stdout
