"""`wfops init`: the scaffold validates, compiles, checks and runs as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import cli, run_cli
from wfops.api.scaffold import SCHEMA_DIR, scaffold_files

EXPECTED = {
    "sources.yaml", "workflows/hello.yaml", "deployments/hello.local.yaml", "nodes/__init__.py",
    "nodes/hello.py", ".pre-commit-config.yaml", ".github/workflows/wfops.yml", ".gitignore",
    f"{SCHEMA_DIR}/workflow.schema.json", f"{SCHEMA_DIR}/deployment.schema.json",
    f"{SCHEMA_DIR}/sources.schema.json", f"{SCHEMA_DIR}/wftest.schema.json", "tests/hello.wftest.yaml",
}


def test_scaffold_files() -> None:
    files = scaffold_files()
    assert set(files) == EXPECTED
    assert ".wfops/" in files[".gitignore"].splitlines()
    for rel in ("sources.yaml", "workflows/hello.yaml", "deployments/hello.local.yaml", "tests/hello.wftest.yaml"):
        first = files[rel].splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=")
        schema = (Path("/p") / rel).parent / first.split("=", 1)[1]
        assert schema.resolve().relative_to("/p").as_posix() in files, first  # resolvable offline
    for kind in ("workflow", "deployment", "sources", "wftest"):
        schema = json.loads(files[f"{SCHEMA_DIR}/{kind}.schema.json"])
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    hooks = files[".pre-commit-config.yaml"]
    assert "id: wfops-validate" in hooks and "id: wfops-check" in hooks and "id: wfops-test" in hooks
    ci = files[".github/workflows/wfops.yml"]
    assert "pull_request:" in ci and "push:" in ci and "pull_request_target" not in ci.replace(
        "(never pull_request_target)", "")
    assert "wfops check --format github" in ci and "wfops test --format github" in ci


def test_init_writes_and_refuses_to_overwrite(tmp_path: Path, capsys) -> None:
    target = tmp_path / "new"
    assert cli("init", str(target)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Created a wfops project in {target}:")
    assert "Next steps:" in out and "wfops run hello.local" in out and "wfops compile" in out
    written = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    assert written == EXPECTED | {".github/workflows/wfops.schedule.yml", ".vscode/settings.json"}
    (target / "workflows" / "hello.yaml").write_text("# mine\n")
    assert cli("init", str(target)) == 2
    err = capsys.readouterr().err
    assert err.startswith("wfops: error: ") and "already exists" in err and "nothing was written" in err
    assert (target / "workflows" / "hello.yaml").read_text() == "# mine\n"
    assert cli("init", str(target), "--force") == 0
    assert (target / "workflows" / "hello.yaml").read_text().startswith("# yaml-language-server")
    (tmp_path / "file").write_text("")
    assert cli("init", str(tmp_path / "file")) == 2


def test_init_merges_an_existing_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/")
    assert cli("init", str(tmp_path)) == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n.wfops/\n__pycache__/\n"


def test_scaffold_validates_compiles_checks_and_runs(tmp_path: Path) -> None:
    assert run_cli("init", "proj", cwd=tmp_path).returncode == 0
    project = tmp_path / "proj"
    for verb in (["validate"], ["compile"], ["check"], ["test"]):
        proc = run_cli(*verb, cwd=project)
        assert proc.returncode == 0, (verb, proc.stdout, proc.stderr)
    assert (project / "wfops.lock").is_file()
    proc = run_cli("run", "hello.local", "--input", "name=you", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    result = proc.json()
    assert result["status"] == "completed" and result["outcome"] == "ok"
    assert result["output"] == {"greeting": "Hello, you!", "banner": "*** Hello, you! ***"}
    assert (project / ".wfops" / "wfops.db").is_file()  # the embedded SQLite default
    graph = run_cli("graph", "hello", cwd=project)
    assert graph.returncode == 0 and graph.stdout.startswith("flowchart TD")


@pytest.mark.slow
def test_scaffold_precommit_config_is_valid(tmp_path: Path) -> None:
    import shutil
    import subprocess

    exe = shutil.which("pre-commit")
    assert exe, "pre-commit is a test dependency (pip install -e '.[test]')"
    assert cli("init", str(tmp_path)) == 0
    proc = subprocess.run([exe, "validate-config", ".pre-commit-config.yaml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_scaffold_hooks_mirror_the_repo_hook_manifest() -> None:
    from ruamel.yaml import YAML

    from tests.everyday.helpers import REPO

    manifest = {h["id"]: h for h in YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())}
    config = YAML(typ="safe").load(scaffold_files()[".pre-commit-config.yaml"])
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert set(hooks) == set(manifest) == {"wfops-validate", "wfops-check", "wfops-test"}
    for hook_id, hook in hooks.items():
        for key in ("entry", "pass_filenames", "files", "require_serial"):
            assert hook[key] == manifest[hook_id][key], (hook_id, key)


def test_scaffold_schemas_are_what_wfops_schema_prints(capsys) -> None:
    files = scaffold_files()
    for kind in ("workflow", "deployment", "sources", "wftest"):
        assert cli("schema", "--kind", kind) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(files[f"{SCHEMA_DIR}/{kind}.schema.json"])


def test_scaffolded_ci_installs_wfops_with_the_spec_init_was_given() -> None:
    from ruamel.yaml import YAML

    job = YAML(typ="safe").load(scaffold_files(wfops_spec="wfops==9.9")[".github/workflows/wfops.yml"])["jobs"]["check"]
    assert job["env"]["WFOPS_PIP"] == "wfops==9.9"
    assert 'python -m pip install "$WFOPS_PIP"' in [step.get("run") for step in job["steps"]]
    assert job["defaults"]["run"]["working-directory"] == "."
    assert job["timeout-minutes"] == 15
    sub = YAML(typ="safe").load(scaffold_files("flows/ops")[".github/workflows/wfops.yml"])
    assert sub["jobs"]["check"]["defaults"]["run"]["working-directory"] == "flows/ops"


def test_init_is_all_or_nothing_and_names_what_is_in_the_way(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    target.mkdir()
    (target / "workflows").write_text("a file where the scaffold needs a folder\n")
    failed = run_cli("init", str(target))
    assert failed.code == 2
    assert f"{target}/workflows is a file where the project needs a folder" in failed.stderr
    assert "nothing was written" in failed.stderr and "hint: move or rename that file" in failed.stderr
    assert sorted(p.name for p in target.iterdir()) == ["workflows"]  # nothing else appeared
    (target / "workflows").unlink()
    retried = run_cli("init", str(target))
    assert retried.code == 0, retried.stderr  # no half scaffold blocks the retry


def test_a_failed_write_undoes_everything_written_before_it(tmp_path: Path) -> None:
    from wfops.api.file_plan import write_all
    from wfops.errors import WfopsError

    (tmp_path / "kept.txt").write_text("before\n")
    plan = [(tmp_path / "new/dir/a.txt", "a\n"), (tmp_path / "kept.txt", "after\n"),
            (tmp_path / "new/b" / ("x" * 300), "too long a name for any file system\n")]
    with pytest.raises(WfopsError) as failed:
        write_all(plan, tmp_path)
    assert "File name too long; nothing was written" in failed.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    assert (tmp_path / "kept.txt").read_text() == "before\n"


@pytest.mark.parametrize("style", ["  - repo", "- repo", "-   repo"])
def test_hooks_are_added_in_the_configs_own_style(style: str) -> None:
    from ruamel.yaml import YAML

    from wfops.api.scaffold_repo import merge_hooks

    pad = " " * (len(style) - len("repo"))
    existing = (f"# top\nrepos:\n{style}: https://github.com/pre-commit/pre-commit-hooks\n"
                f"{pad}rev: v4.6.0   # pinned\n{pad}hooks: [{{id: trailing-whitespace}}]\n")
    merged = merge_hooks(existing, scaffold_files()[".pre-commit-config.yaml"], "x")
    assert merged is not None and merged.startswith(existing)
    assert f"\n{style}: local\n" in merged
    repos = YAML(typ="safe").load(merged)["repos"]
    assert [h["id"] for h in repos[1]["hooks"]] == ["wfops-validate", "wfops-check", "wfops-test"]
    assert merge_hooks(merged, scaffold_files()[".pre-commit-config.yaml"], "x") is None  # already there


def test_hooks_go_at_the_end_of_repos_before_the_next_key() -> None:
    from wfops.api.scaffold_repo import merge_hooks

    head = "default_stages: [pre-commit]\nrepos:\n- repo: local\n  hooks: [{id: x, name: x, entry: 'true', language: system}]\n  # - id: disabled\n"
    tail = "\n# about ci\nci:\n  autofix_prs: false\n"
    merged = merge_hooks(head + tail, scaffold_files("sub")[".pre-commit-config.yaml"], "x")
    assert merged is not None and merged.startswith(head + "- repo: local\n  hooks:\n  - id: wfops-validate\n")
    assert merged.endswith("    require_serial: true\n" + tail)
    assert "    args: [--project, \"sub\"]\n" in merged
