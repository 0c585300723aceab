"""`wfops compile`: a deterministic lock, identical on any machine and in any directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.harness import cli as wfops


def test_compile_writes_a_deterministic_lock(project: Path, tmp_path: Path, capsys) -> None:
    assert wfops("compile", "--project", str(project)) == 0
    first = (project / "wfops.lock").read_bytes()
    assert wfops("compile", "--project", str(project)) == 0
    assert (project / "wfops.lock").read_bytes() == first
    assert "unchanged" in capsys.readouterr().out

    elsewhere = tmp_path / "another" / "place"
    shutil.copytree(project, elsewhere, ignore=shutil.ignore_patterns("wfops.lock", "__pycache__"))
    assert wfops("compile", "--project", str(elsewhere)) == 0
    assert (elsewhere / "wfops.lock").read_bytes() == first

    text = first.decode()
    assert text.endswith("}\n") and str(tmp_path) not in text
    lock = json.loads(text)
    assert set(lock) == {"version", "workflows", "deployments", "sources"}
    assert lock["deployments"]["hello.local"]["artifact"] == lock["workflows"]["hello"]["hash"]
    assert lock["deployments"]["hello.local"]["bindings"] == {"ops": "ops", "std": "std"} or \
        lock["deployments"]["hello.local"]["bindings"] == {"ops": "ops"}
    greet = lock["sources"]["ops"]["capabilities"]["greet"]
    assert set(greet) == {"input_schema", "output_schema", "outcomes", "description", "hash"}
    assert greet["description"] == "Say hello."
    assert lock["workflows"]["hello"]["subworkflows"] == {"loud": lock["workflows"]["loud"]["hash"]}


def test_subworkflow_change_changes_the_parent_hash(project: Path) -> None:
    assert wfops("compile", "--project", str(project)) == 0
    before = json.loads((project / "wfops.lock").read_text())
    loud = project / "workflows/loud.yaml"
    loud.write_text(loud.read_text().replace("on: {ok: end, empty: end}", "on: {ok: end, empty: end}\n    timeout: 5"))
    assert wfops("compile", "--project", str(project)) == 0
    after = json.loads((project / "wfops.lock").read_text())
    assert after["workflows"]["loud"]["hash"] != before["workflows"]["loud"]["hash"]
    assert after["workflows"]["hello"]["hash"] != before["workflows"]["hello"]["hash"]


def test_out_writes_one_artifact_per_workflow_that_loads_back(project: Path, tmp_path: Path) -> None:
    from wfops.compiler.artifact import artifact_hash, load_artifact, normalize_workflow

    out = tmp_path / "artifacts"
    assert wfops("compile", "--project", str(project), "--out", str(out)) == 0
    assert sorted(p.name for p in out.iterdir()) == ["hello.json", "loud.json"]
    body = json.loads((out / "hello.json").read_text())
    workflow = load_artifact(body["workflow"])
    assert normalize_workflow(workflow) == body["workflow"]
    assert artifact_hash(body["workflow"], body["subworkflows"]) == body["hash"]
    assert body["workflow"]["steps"][0]["on"] == {"ok": "loud"}


def test_compile_refuses_a_broken_project_and_writes_nothing(project: Path, capsys) -> None:
    (project / "workflows/hello.yaml").write_text("name: hello\nsteps: [}\n")
    assert wfops("compile", "--project", str(project), "--format", "json") == 1
    assert not (project / "wfops.lock").exists()
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_compile_repairs_a_corrupt_lock(project: Path) -> None:
    (project / "wfops.lock").write_text("{not json")
    assert wfops("compile", "--project", str(project)) == 0
    assert json.loads((project / "wfops.lock").read_text())["version"] == 1


def test_compile_hashes_the_project_once_however_many_deployments_it_gates(
        tmp_path: Path, monkeypatch) -> None:
    """compile gates every deployment to leave each first run its gate record; each gate
    reuses compile's own `compile_project` instead of hashing the whole project again."""
    import wfops.api.compile
    import wfops.lock.gate
    from tests.runner.helpers import make_run_project
    from wfops.api import Project
    from wfops.fastpath.gate import RECORDS, recorded
    from wfops.lock.build import compile_project

    root = make_run_project(tmp_path / "p")  # four deployments, compiled once already
    calls: list[object] = []

    def counted(validation):  # the real function, counted
        calls.append(validation)
        return compile_project(validation)

    monkeypatch.setattr(wfops.api.compile, "compile_project", counted)
    monkeypatch.setattr(wfops.lock.gate, "compile_project", counted)
    shutil.rmtree(root / RECORDS)
    assert Project(root).compile().ok
    assert len(calls) == 1
    assert recorded(root, "chain.local") is not None  # and every gate was still decided and recorded
