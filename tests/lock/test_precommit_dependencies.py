"""The published hooks run in pre-commit's own virtualenv: a python source importing a
package wfops does not depend on fails there, and `additional_dependencies` (as the
docs say) makes it pass. Real `pre-commit` and `git`, this repository's committed HEAD
as the hook repository; `toolz` is the third-party package (not in wfops' dependency closure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import run_cli
from tests.lock import test_precommit
from tests.lock.test_precommit import git, hook_config, pre_commit

pytestmark = test_precommit.pytestmark  # slow; skipped without pre-commit and git


def test_additional_dependencies_let_a_source_import_a_third_party_package(tmp_path: Path,
                                                                           pre_commit_home: Path) -> None:
    pytest.importorskip("toolz")  # the project compiles here first, where toolz is installed
    root = tmp_path / "repo"
    assert run_cli("init", str(root)).code == 0
    node = root / "nodes/hello.py"
    node.write_text(node.read_text().replace("import wfops\n", "import toolz  # noqa: F401\n\nimport wfops\n"))
    assert run_cli("compile", cwd=root).code == 0
    git(root, "init", "-q")

    # The bare hook environment is the one test_precommit.py's hook uses: built once.
    (root / ".pre-commit-config.yaml").write_text(hook_config("wfops-validate"))
    git(root, "add", "-A")
    bare = pre_commit(root, pre_commit_home)
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "source-error" in bare.stdout and "imports `toolz`, which is not installed" in bare.stdout
    assert "under pre-commit, list it in the hook's `additional_dependencies`" in bare.stdout

    (root / ".pre-commit-config.yaml").write_text(hook_config("wfops-validate",
                                                              "        additional_dependencies: [toolz]\n"))
    git(root, "add", "-A")
    fixed = pre_commit(root, pre_commit_home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "wfops validate" in fixed.stdout and "Passed" in fixed.stdout
