"""Lock findings (stale-lock, drift, pins, MCP not contacted) name their subject in fields."""

from __future__ import annotations

from pathlib import Path

from wfops.diagnostics import Diagnostic


def compile_lock(root: Path) -> None:
    from wfops.compiler.validate import validate_project
    from wfops.lock.build import compile_project
    from wfops.lockfile import write_lock
    from wfops.sources.python import forget_project_modules

    try:
        write_lock(root, compile_project(validate_project(root)).to_lock())
    finally:
        forget_project_modules(root)


def checked(root: Path) -> list[Diagnostic]:
    from wfops.lock.check import check_project
    from wfops.sources.python import forget_project_modules

    try:
        return check_project(root)
    finally:
        forget_project_modules(root)


def gated(root: Path, name: str = "hello.local"):
    from wfops.compiler.validate import validate_project
    from wfops.lock.gate import check_deployment
    from wfops.sources.python import forget_project_modules

    try:
        return check_deployment(validate_project(root), name)
    finally:
        forget_project_modules(root)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_stale_workflow_names_workflow_and_changed_step(project: Path) -> None:
    compile_lock(project)
    edit(project / "workflows/loud.yaml", "on: {ok: end, empty: end}", "on: {ok: end, empty: end}\n    timeout: 5")
    stale = {d.file: d.subject() for d in checked(project) if d.code == "stale-lock"}
    assert stale == {"workflows/loud.yaml": {"workflow": "loud", "step": "shout"},
                     "workflows/hello.yaml": {"workflow": "hello"},  # its subworkflow changed
                     "deployments/hello.local.yaml": {"deployment": "hello.local", "workflow": "hello"}}


def test_stale_deployment_names_deployment_and_workflow(project: Path) -> None:
    compile_lock(project)
    dep = project / "deployments/hello.local.yaml"
    dep.write_text(dep.read_text() + "secrets: [TOKEN]\n")
    stale = [d for d in checked(project) if d.code == "stale-lock"]
    assert [d.subject() for d in stale] == [{"deployment": "hello.local", "workflow": "hello"}]


def test_capability_drift_names_source_and_calling_step(project: Path) -> None:
    compile_lock(project)
    edit(project / "nodes/ops.py", "    times: int = 1", "    times: float = 1")
    drift = [d for d in checked(project) if d.code == "capability-drift"]
    assert [d.subject() for d in drift] == [{"source": "ops", "workflow": "hello", "step": "greet"}]
    gate = gated(project)
    assert [d.subject() for d in gate.diagnostics] == [
        {"source": "ops", "workflow": "hello", "step": "greet", "deployment": "hello.local"}]


def test_pin_mismatch_and_unknown_deployment_name_the_deployment(project: Path) -> None:
    compile_lock(project)
    edit(project / "deployments/hello.local.yaml", "workflow: hello", "workflow: hello@sha256:0000")
    pins = [d for d in checked(project) if d.code == "pin-mismatch"]
    assert [d.subject() for d in pins] == [{"deployment": "hello.local", "workflow": "hello"}]
    unknown = gated(project, "nope").diagnostics
    assert [(d.code, d.subject()) for d in unknown] == [("unknown-deployment", {"deployment": "nope"})]


def test_mcp_not_contacted_once_per_source_without_reading_messages(project: Path) -> None:
    from wfops.compiler.validate import validate_project
    from wfops.lock.build import compile_project
    from wfops.sources.python import forget_project_modules

    edit(project / "sources.yaml", "sources:\n", "sources:\n  clock: {kind: mcp, command: [nowhere]}\n"
         "  clock2: {kind: mcp, command: [nowhere]}\n")
    wf = ("name: times\nsteps:\n  - id: a\n    uses: clock2.now\n    next: b\n"
          "  - id: b\n    uses: clock.now\n    next: end\n")
    (project / "workflows/times.yaml").write_text(wf)
    try:
        compiled = compile_project(validate_project(project))
    finally:
        forget_project_modules(project)
    found = [d for d in compiled.diagnostics if d.code == "mcp-not-contacted"]
    assert sorted((d.source, d.workflow, d.step) for d in found) == [("clock", "times", "b"),
                                                                     ("clock2", "times", "a")]
