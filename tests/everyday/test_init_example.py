"""The worked examples ship in the package (a copy generated from the repository's own
project, guarded here) and `wfops init --example NAME` makes a project of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import run_cli
from wfops.api.examples import names, packaged_files, repository_files

REPO = Path(__file__).resolve().parents[2]


def test_the_packaged_examples_are_the_repositorys() -> None:
    assert packaged_files() == repository_files(REPO), "regenerate: python -m wfops.api.examples"
    assert names() == ["approval", "catalog-lookup", "fanout", "meeting-report", "wordcount", "world-clock"]


def test_a_change_to_an_example_fails_the_guard(tmp_path: Path) -> None:
    for name in ("sources.yaml", "workflows", "deployments", "tests", "examples"):
        source = REPO / name
        target = tmp_path / name
        if source.is_dir():
            import shutil

            shutil.copytree(source, target)
        else:
            target.write_text(source.read_text())
    assert repository_files(tmp_path) == packaged_files()
    (tmp_path / "workflows" / "fanout.yaml").write_text("name: fanout\n")
    assert repository_files(tmp_path) != packaged_files()


@pytest.mark.parametrize("example", ["meeting-report", "fanout", "approval", "wordcount"])
def test_init_example_validates_compiles_tests_and_runs(tmp_path: Path, example: str) -> None:
    made = run_cli("init", str(tmp_path / "p"), "--example", example, "--wfops-spec", "wfops==0.1.0")
    assert made.code == 0, made.stderr
    assert f"wfops run {example}.local" in made.stdout
    root = tmp_path / "p"
    assert not (root / "workflows" / "hello.yaml").exists()
    assert (root / "workflows" / f"{example}.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../.wfops-schemas/workflow.schema.json\n")
    assert run_cli("validate", cwd=root).code == 0
    assert run_cli("compile", cwd=root).code == 0
    tested = run_cli("test", cwd=root)
    assert tested.code == 0 and " 0 failed, 0 errors" in tested.stdout, tested.stdout
    ran = run_cli("run", f"{example}.local", "--json", cwd=root)
    assert ran.json()["status"] in ("completed", "interrupted")


def test_fanout_brings_its_subworkflow_and_only_the_sources_it_uses(tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path), "--example", "fanout").code == 0
    assert sorted(p.name for p in (tmp_path / "workflows").iterdir()) == ["fanout.yaml", "greet-one.yaml"]
    assert sorted(p.name for p in (tmp_path / "tests").iterdir()) == ["fanout.wftest.yaml", "greet-one.wftest.yaml"]
    assert "sources: {}" in (tmp_path / "sources.yaml").read_text()
    assert not (tmp_path / "examples").exists()


def test_an_unknown_example_is_named_with_the_known_ones(tmp_path: Path) -> None:
    refused = run_cli("init", str(tmp_path / "p"), "--example", "nope")
    assert refused.code == 2
    assert refused.stderr.splitlines() == [
        "wfops: error: no example 'nope'", "  hint: examples: approval, catalog-lookup, fanout, meeting-report, wordcount, world-clock"]
    assert not (tmp_path / "p").exists()


@pytest.mark.slow
def test_world_clock_example_with_its_mcp_server(tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path), "--example", "world-clock").code == 0
    assert "clock:" in (tmp_path / "sources.yaml").read_text()
    assert run_cli("compile", cwd=tmp_path).code == 0
    assert run_cli("test", cwd=tmp_path).code == 0
