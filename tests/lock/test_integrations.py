"""The hook manifest, the repo's pre-commit config, CI and .ci/run say what the docs promise."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.conftest import REPO


def load(rel: str):
    from ruamel.yaml import YAML

    return YAML(typ="safe").load((REPO / rel).read_text(encoding="utf-8"))


def test_hook_manifest_exposes_the_three_hooks() -> None:
    hooks = {h["id"]: h for h in load(".pre-commit-hooks.yaml")}
    assert set(hooks) == {"wfops-validate", "wfops-check", "wfops-test"}
    assert hooks["wfops-validate"]["entry"] == "wfops validate"
    assert hooks["wfops-check"]["entry"] == "wfops check"
    assert hooks["wfops-test"]["entry"] == "wfops test"
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["pass_filenames"] is False

        for name in ("workflows/a.yaml", "sources.yml", "nodes/ops.py", "wfops.lock", "sub/wfops.lock"):
            assert re.search(hook["files"], name), name
        assert not re.search(hook["files"], "README.md")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="needs pre-commit (pip install -e '.[test]')")
def test_pre_commit_accepts_the_manifest_and_the_config() -> None:
    for args in (["validate-manifest", ".pre-commit-hooks.yaml"], ["validate-config", ".pre-commit-config.yaml"]):
        done = subprocess.run(["pre-commit", *args], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_ci_runs_tests_and_check_on_push_and_pull_request() -> None:
    ci = load(".github/workflows/ci.yml")
    assert set(ci["on"]) == {"push", "pull_request"}
    steps = ci["jobs"]["test"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert "bash .ci/run" in runs and "wfops check --format github" in runs
    assert any(s.get("with", {}).get("python-version") == "3.11" for s in steps)
    script = (REPO / ".ci/run").read_text().splitlines()
    tests = script.index("python3 -m pip install -e '.[test]' && python3 -m pytest")
    assert "wfops check" in script[tests + 1:] and "wfops test" in script[tests + 1:]
