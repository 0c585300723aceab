"""Where the scaffold's CI gets wfops from (how this wfops was installed, or --wfops-spec),
and the editor settings `init` writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.harness import run_cli
from wfops.api import install_spec as spec_of
from wfops.api.scaffold import editor_schemas


def _ci_spec(root: Path, name: str = "wfops.yml") -> str:
    from ruamel.yaml import YAML

    return str(YAML(typ="safe").load((root / ".github/workflows" / name).read_text())["jobs"]["check"]["env"]
               ["WFOPS_PIP"])


@pytest.mark.parametrize(("direct", "expected"), [
    ({"url": "https://example.org/wfops.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
     "wfops @ git+https://example.org/wfops.git@abc123"),
    ({"url": "file:///opt/src/wfops", "dir_info": {}}, "wfops @ file:///opt/src/wfops"),
    ({"url": "https://example.org/wfops-0.1.0-py3-none-any.whl", "archive_info": {}},
     "wfops @ https://example.org/wfops-0.1.0-py3-none-any.whl"),
    ({}, f"wfops=={spec_of.__version__}"),  # from a package index: the version
])
def test_the_spec_of_an_installed_wfops(direct: dict[str, object], expected: str) -> None:
    assert spec_of._direct_spec(direct) == expected


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_the_spec_of_a_checkout_is_its_remote_and_commit_or_its_path(tmp_path: Path) -> None:
    checkout = tmp_path / "src"
    (checkout / "wfops").mkdir(parents=True)
    (checkout / "wfops" / "__init__.py").write_text("")
    (checkout / "pyproject.toml").write_text("[project]\nname = 'wfops'\n")
    assert spec_of._checkout_spec(checkout) == f"wfops @ {checkout.as_uri()}"  # not even a repository
    _git(checkout, "init", "-q")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    assert spec_of._checkout_spec(checkout) == f"wfops @ {checkout.as_uri()}"  # no remote
    _git(checkout, "remote", "add", "origin", "https://example.org/team/wfops.git")
    commit = _git(checkout, "rev-parse", "HEAD")
    assert spec_of._checkout_spec(checkout) == f"wfops @ git+https://example.org/team/wfops.git@{commit}"


def test_init_writes_the_spec_it_says_and_takes_an_override(tmp_path: Path) -> None:
    made = run_cli("init", str(tmp_path / "a"))
    assert made.code == 0
    spec = _ci_spec(tmp_path / "a")
    assert spec == spec_of.install_spec()
    assert f"CI installs wfops with: pip install '{spec}'" in made.stdout
    assert "pip install pre-commit" in made.stdout  # named where the user is told to run it
    given = run_cli("init", str(tmp_path / "b"), "--wfops-spec", "wfops @ git+https://example.org/w.git@v1")
    assert given.code == 0 and _ci_spec(tmp_path / "b") == "wfops @ git+https://example.org/w.git@v1"
    empty = run_cli("init", str(tmp_path / "c"), "--wfops-spec", " ")
    assert empty.code == 2 and empty.stderr.startswith("wfops: error: --wfops-spec is empty")
    assert not (tmp_path / "c").exists()


def test_vscode_settings_map_every_kind_and_merge_into_existing_ones(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text('{"editor.tabSize": 2}\n')
    assert run_cli("init", str(tmp_path / "flows")).code == 0
    settings = json.loads((tmp_path / ".vscode" / "settings.json").read_text())
    assert settings["editor.tabSize"] == 2
    assert settings["yaml.schemas"] == editor_schemas("flows")
    assert settings["yaml.schemas"]["./flows/.wfops-schemas/workflow.schema.json"] == [
        "flows/workflows/*.yaml", "flows/workflows/*.yml"]
    for schema, globs in settings["yaml.schemas"].items():
        assert (tmp_path / schema).is_file() and all(g.startswith("flows/") for g in globs)
    commented = '// mine\n{"a": 1}\n'
    (tmp_path / ".vscode" / "settings.json").write_text(commented)
    assert run_cli("init", str(tmp_path / "more")).code == 0
    assert (tmp_path / ".vscode" / "settings.json").read_text() == commented  # JSONC is left alone


@pytest.mark.slow
def test_the_scaffolded_ci_passes_actionlint(tmp_path: Path) -> None:
    import shutil

    actionlint = shutil.which("actionlint")
    assert actionlint, "actionlint is a test dependency (pip install -e '.[test]')"
    _git(tmp_path, "init", "-q")
    assert run_cli("init", str(tmp_path)).code == 0
    assert run_cli("init", str(tmp_path / "flows" / "a")).code == 0
    files = sorted(str(p) for p in (tmp_path / ".github" / "workflows").glob("*.yml"))
    assert [Path(f).name for f in files] == ["wfops-flows-a.schedule.yml", "wfops-flows-a.yml",
                                             "wfops.schedule.yml", "wfops.yml"]  # each project's CI and ticks
    linted = subprocess.run([actionlint, "-no-color", *files], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert linted.returncode == 0, linted.stdout + linted.stderr


@pytest.mark.slow
def test_wfops_installs_from_the_spec_init_wrote(tmp_path: Path) -> None:
    import os
    import sys

    project = tmp_path / "proj"
    assert run_cli("init", str(project)).code == 0
    spec = _ci_spec(project)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # The spec as CI passes it; --no-deps: wfops's dependencies are the ones already here.
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                                spec], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = subprocess.run([str(python), "-c", "import wfops; print(wfops.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    validated = subprocess.run([str(venv / "bin" / "wfops"), "validate"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=120)
    assert validated.returncode == 0, validated.stdout + validated.stderr
