"""The run gate: what a deployment may run with, and when it is refused."""

from __future__ import annotations

from pathlib import Path

from tests.harness import cli


def gate_for(root: Path, name: str = "hello.local", **kwargs):
    from wfops.compiler.validate import validate_project
    from wfops.lock.gate import check_deployment
    from wfops.sources.python import forget_project_modules

    try:
        return check_deployment(validate_project(root), name, **kwargs)
    finally:
        forget_project_modules(root)


def test_fresh_lock_opens_the_gate_with_the_whole_tree(project: Path) -> None:
    from wfops.canonical import sha256_of
    from wfops.compiler.artifact import artifact_hash, load_artifact

    assert cli("compile", "--project", str(project)) == 0
    gate = gate_for(project)
    assert gate.ok and gate.diagnostics == [] and gate.warnings == []
    assert gate.workflow == "hello" and set(gate.workflows) == {"hello", "loud"}
    assert set(gate.normalized) == set(gate.artifacts.values())
    for name, digest in gate.artifacts.items():
        rebuilt = load_artifact(gate.normalized[digest])
        assert rebuilt.name == name
    children = {"loud": gate.artifacts["loud"]}
    assert artifact_hash(gate.normalized[gate.artifacts["hello"]], children) == gate.artifacts["hello"]
    assert gate.bindings["ops"] == "ops"
    assert sha256_of(gate.normalized[gate.artifacts["loud"]])  # plain JSON data


def test_missing_lock_unknown_deployment_and_stale_lock_refuse(project: Path) -> None:
    gate = gate_for(project)
    assert not gate.ok and [d.code for d in gate.diagnostics] == ["stale-lock"]
    assert cli("compile", "--project", str(project)) == 0
    gate = gate_for(project, "nope")
    assert not gate.ok and gate.diagnostics[0].code == "unknown-deployment"
    wf = project / "workflows/loud.yaml"
    wf.write_text(wf.read_text().replace("on: {ok: end, empty: end}", "on: {ok: end, empty: end}\n    timeout: 2"))
    gate = gate_for(project)
    assert not gate.ok and {d.code for d in gate.diagnostics} == {"stale-lock"}


def test_drift_fails_or_warns_by_policy(project: Path) -> None:
    from wfops.sources.base import Capability

    assert cli("compile", "--project", str(project)) == 0
    ops = project / "nodes/ops.py"
    ops.write_text(ops.read_text().replace("    times: int = 1", "    times: float = 1"))
    gate = gate_for(project)
    assert not gate.ok and [d.code for d in gate.diagnostics] == ["capability-drift"]
    dep = project / "deployments/hello.local.yaml"
    dep.write_text(dep.read_text() + "drift: warn\n")
    assert cli("compile", "--project", str(project)) == 0  # lock now has drift: warn and the new contract
    ops.write_text(ops.read_text().replace("    times: float = 1", "    times: int = 1"))
    gate = gate_for(project)
    assert gate.ok and [d.code for d in gate.warnings] == ["capability-drift"]

    # Live contracts passed by the runner override what validation saw.
    ops.write_text(ops.read_text().replace("    times: int = 1", "    times: float = 1"))
    assert gate_for(project).ok and not gate_for(project).warnings
    from wfops.compiler.validate import validate_project

    greet = validate_project(project).catalog["ops"]["greet"]
    forged = greet.replace(outcomes=("ok", "extra"))
    assert isinstance(forged, Capability)
    gate = gate_for(project, live_catalog={"ops": {"greet": forged, "shout": validate_project(project).catalog["ops"]["shout"]}})
    assert gate.ok and any("outcome `extra` added" in d.message for d in gate.warnings)


def test_project_errors_refuse(project: Path) -> None:
    assert cli("compile", "--project", str(project)) == 0
    (project / "workflows/loud.yaml").write_text("name: loud\nsteps: []\n")
    gate = gate_for(project)
    assert not gate.ok and gate.diagnostics and all(d.is_error for d in gate.diagnostics)


def test_corrupt_lock_refuses_with_a_diagnostic(project: Path) -> None:
    (project / "wfops.lock").write_text('{"version": 99}')
    gate = gate_for(project)
    assert not gate.ok and [d.code for d in gate.diagnostics] == ["corrupt-lock"]
    assert "version" in gate.diagnostics[0].message


def test_an_error_in_an_unrelated_workflow_or_deployment_does_not_refuse(project: Path) -> None:
    assert cli("compile", "--project", str(project)) == 0
    (project / "workflows/broken.yaml").write_text("name: broken\nsteps: [{id: a, bogus: 1}]\n")
    (project / "workflows/unparsable.yaml").write_text("name: [unclosed\n")
    (project / "workflows/other.yaml").write_text(
        "name: other\nsteps:\n  - {id: a, uses: nowhere.thing, next: end}\n")
    (project / "deployments/other.yaml").write_text("name: other.local\nworkflow: missing\n")
    from wfops.compiler.validate import validate_project

    everything = {d.file for d in validate_project(project).diagnostics if d.is_error}
    assert {"workflows/broken.yaml", "workflows/unparsable.yaml", "workflows/other.yaml",
            "deployments/other.yaml"} <= everything  # `validate` still reports them all
    gate = gate_for(project)
    assert gate.ok, gate.diagnostics
    assert not gate_for(project, "other.local").ok


def test_an_error_in_a_subworkflow_it_reaches_still_refuses(project: Path) -> None:
    assert cli("compile", "--project", str(project)) == 0
    (project / "workflows/loud.yaml").write_text("name: loud\nsteps: [{id: a, bogus: 1}]\n")
    gate = gate_for(project)
    assert not gate.ok and any(d.file == "workflows/loud.yaml" for d in gate.diagnostics)
