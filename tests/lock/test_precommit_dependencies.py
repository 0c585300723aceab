"""The published hooks run in pre-commit's own virtualenv: a python source importing a
package wfops does not depend on fails there, and `additional_dependencies` (as the
docs say) makes it pass. Real `pre-commit` and `git`, this repository's committed HEAD
as the hook repository; `six` is the third-party package (not a wfops dependency)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.harness import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    shutil.which("pre-commit") is None or shutil.which("git") is None,
    reason="needs pre-commit and git on PATH (pip install -e '.[test]')")]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def config(rev: str, extra: str) -> str:
    return (f"repos:\n  - repo: {REPO}\n    rev: {rev}\n    hooks:\n"
            f"      - id: wfops-validate\n{extra}")


def pre_commit(root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)  # the hook's own virtualenv, nothing from this process
    return subprocess.run(["pre-commit", "run", "--all-files"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


def test_additional_dependencies_let_a_source_import_a_third_party_package(tmp_path: Path) -> None:
    pytest.importorskip("six")  # the project compiles here first, where six is installed
    root = tmp_path / "repo"
    assert run_cli("init", str(root)).code == 0
    node = root / "nodes/hello.py"
    node.write_text(node.read_text().replace("import wfops\n", "import six  # noqa: F401\n\nimport wfops\n"))
    assert run_cli("compile", cwd=root).code == 0
    rev = git(REPO, "rev-parse", "HEAD")
    git(root, "init", "-q")

    (root / ".pre-commit-config.yaml").write_text(config(rev, ""))
    git(root, "add", "-A")
    bare = pre_commit(root, tmp_path / "home")
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "source-error" in bare.stdout and "imports `six`, which is not installed" in bare.stdout
    assert "under pre-commit, list it in the hook's `additional_dependencies`" in bare.stdout

    (root / ".pre-commit-config.yaml").write_text(config(rev, "        additional_dependencies: [six]\n"))
    git(root, "add", "-A")
    fixed = pre_commit(root, tmp_path / "home")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "wfops validate" in fixed.stdout and "Passed" in fixed.stdout
