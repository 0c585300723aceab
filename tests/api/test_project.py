"""The core API on its own: every verb of `wfops.Project`, no CLI, no MCP."""

from __future__ import annotations

import json
import sys
import threading
from datetime import datetime
from pathlib import Path

import pytest

import wfops
from wfops.api.runs import RUN_KEYS
from wfops.errors import CallFailed, ProjectNotFound, RefusedError, UnknownRunError, UsageError


def test_public_names_are_held() -> None:
    assert sorted(wfops.__all__) == sorted([
        "CallFailed", "CallOutcome", "Capabilities", "CapabilityError", "CapabilityInfo", "CaseResult", "CompileReport",
        "Diagnostic", "Interrupt", "Project", "ProjectNotFound", "RefusedError", "Report", "Result", "Run",
        "RunBusyError", "Scaffold", "StepTimeout", "StoreError", "TestReport", "TraceEntry", "UnknownRunError", "UsageError",
        "WfopsError", "__version__", "init", "node", "schema", "validate_files"])
    for name in wfops.__all__:
        assert getattr(wfops, name) is not None
    for name in ("Project", "Report", "Run", "CompileReport"):
        assert getattr(wfops, name).__module__.startswith("wfops.api")


def test_errors_form_one_tree_without_exit_codes() -> None:
    for name in ("UsageError", "RefusedError", "ProjectNotFound", "UnknownRunError", "StoreError",
                 "RunBusyError", "CallFailed", "CapabilityError", "StepTimeout"):
        kind = getattr(wfops, name)
        assert issubclass(kind, wfops.WfopsError)
        assert not hasattr(kind, "exit_code")


def test_validate_compile_check(root: Path) -> None:
    project = wfops.Project(root)
    report = project.validate()
    assert report.ok and report.diagnostics == []
    assert project.check().ok
    (root / "workflows/twice.yaml").write_text((root / "workflows/twice.yaml").read_text().replace(
        "calc.double", "calc.dubble"))
    report = project.validate()
    assert not report.ok
    [found] = report.diagnostics
    assert (found.code, found.file, found.workflow, found.step) == (
        "unknown-capability", "workflows/twice.yaml", "twice", "one")
    only = project.validate(["workflows/lies.yaml"])
    assert only.ok and only.checked == ["workflows/lies.yaml"]
    assert not project.check().ok
    compiled = project.compile()
    assert not compiled.written and not compiled.ok


def test_validate_text_inline(root: Path) -> None:
    project = wfops.Project(root)
    text = (root / "workflows/twice.yaml").read_text().replace("next: end", "next: nowhere")
    report = project.validate(text=text, kind="workflow", path="workflows/twice.yaml")
    assert [d.code for d in report.diagnostics] == ["unknown-target"]
    assert report.checked == ["workflows/twice.yaml"] and report.static_checks
    with pytest.raises(UsageError):
        project.validate(text=text)


@pytest.mark.parametrize("path", ["../outside.yaml", "/etc/hostname", "workflows/../../outside.yaml", "link.yaml"])
def test_paths_outside_the_project_are_refused(root: Path, path: str) -> None:
    (root.parent / "outside.yaml").write_text("secret: 1\n")
    (root / "link.yaml").symlink_to(root.parent / "outside.yaml")
    project = wfops.Project(root)
    with pytest.raises(UsageError, match="outside the project"):
        project.validate([path])
    with pytest.raises(UsageError, match="outside the project"):
        project.validate(text="name: x\n", kind="workflow", path=path)


def test_run_runs_trace_get_run(root: Path) -> None:
    project = wfops.Project(root)
    seen: list[int] = []
    run = project.run("twice.local", input={"n": 4}, on_step=lambda entry: seen.append(entry.seq))
    assert (run.status, run.outcome, run.output) == ("completed", "ok", {"doubled": 8})
    assert list(run.to_dict()) == list(RUN_KEYS)
    assert run.to_dict()["steps"] == 1 and run.duration_ms is not None and run.created_at is not None
    json.dumps(run.to_dict(), allow_nan=False)
    assert seen == [1]
    assert [r.run_id for r in project.runs()] == [run.run_id]
    assert project.runs(status="failed") == []
    stored = project.get_run(run.run_id)
    # The stored run adds its input and its state after the last step.
    assert stored.to_dict() == {**run.to_dict(), "input": {"n": 4}, "state": stored.details.state}
    assert stored.steps == 1 and not stored.orphaned
    [entry] = project.trace(run.run_id)
    assert (entry.step, entry.kind, entry.output) == ("one", "call", {"doubled": 8})
    assert "twice" in project.step_summary(run.run_id)
    with pytest.raises(UnknownRunError):
        project.get_run("nope")
    with pytest.raises(UsageError):
        project.runs(status="bogus")
    project.remove_run(run.run_id)
    assert project.runs() == []
    assert project.prune(0) == 0


def test_a_run_driven_here_is_not_read_back_whole(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its result holds the driver's own snapshot: the store adds only its times, step count and
    # meta (`record_of`), never decoding the run's input and output again (a million-item input
    # was held twice at the end of the run).
    from wfops.store.base import SqlStore

    project = wfops.Project(root)
    waiting = project.run("ask.local")
    done = project.run("twice.local", input={"n": 4})

    def refused(self: SqlStore, run_id: str) -> None:
        raise AssertionError(f"read back whole: {run_id}")

    with monkeypatch.context() as patched:
        patched.setattr(SqlStore, "get_run", refused)
        driven = {"run": project.run("twice.local", input={"n": 4})}
    # A resume and a fork read the run they continue (its state), then end the same way.
    driven |= {"resume": project.resume(waiting.run_id, "approved", {"v": 1}),
               "fork": project.fork(done.run_id, "one", input={"n": 5})}
    for how, run in driven.items():
        stored = project.get_run(run.run_id).to_dict()
        assert {**run.to_dict(), "input": stored["input"], "state": stored["state"]} == stored, how
    assert driven["fork"].forked_from == {"run_id": done.run_id, "step": "one"}  # from the run's meta


def test_interrupt_and_resume(root: Path) -> None:
    project = wfops.Project(root)
    run = project.run("ask.local")
    assert run.status == "interrupted" and run.interrupt is not None
    assert run.interrupt.outcomes == ["approved"]
    with pytest.raises(RefusedError):
        project.resume(run.run_id, "nope", {"v": 1})
    done = project.resume(run.run_id, "approved", {"v": 1})
    assert done.status == "completed" and done.outcome == "ok"


def test_cancel_fork_and_run_details(root: Path) -> None:
    project = wfops.Project(root)
    waiting = project.run("ask.local")
    cancelled = project.cancel(waiting.run_id)  # nobody drives it: cancelled at once
    assert (cancelled.status, cancelled.interrupt) == ("cancelled", None)
    assert [r.run_id for r in project.runs(status="cancelled")] == [waiting.run_id]
    assert project.resume(waiting.run_id).status == "interrupted"  # back at its interrupt
    done = project.run("twice.local", input={"n": 4})
    with pytest.raises(RefusedError):
        project.cancel(done.run_id)
    fork = project.fork(done.run_id, "one", input={"n": 5})
    assert fork.run_id != done.run_id and fork.output == {"doubled": 10}
    assert fork.forked_from == {"run_id": done.run_id, "step": "one"}
    shown = project.get_run(fork.run_id)
    assert shown.forked_from == fork.forked_from and shown.details is not None
    assert shown.details.input == {"n": 5}
    assert project.get_run(done.run_id).output == {"doubled": 8}  # the original is untouched


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_input_and_payload_are_refused(root: Path, bad: float) -> None:
    project = wfops.Project(root)
    with pytest.raises(UsageError, match="not a JSON number"):
        project.run("twice.local", input={"n": {"deep": [bad]}})
    run = project.run("ask.local")
    with pytest.raises(UsageError, match="not a JSON number"):
        project.resume(run.run_id, "approved", {"v": bad})
    assert project.get_run(run.run_id).status == "interrupted"  # nothing was stored
    with pytest.raises(UsageError, match="not a JSON number"):
        project.call("calc.double", {"n": bad})


def test_capabilities_capability_call_graph(root: Path) -> None:
    project = wfops.Project(root)
    refs = {c.ref: c for c in project.capabilities().capabilities}
    assert {"std.echo", "calc.double", "calc.liar"} <= set(refs)
    assert refs["calc.double"].source_kind == "python" and refs["std.echo"].source_kind == "std"
    assert project.capability("calc.double").input_schema["required"] == ["n"]
    assert project.call("calc.double", {"n": 21}).to_dict() == {"outcome": "ok", "output": {"doubled": 42}}
    with pytest.raises(CallFailed) as info:
        project.call("calc.liar", {"n": 1})
    assert info.value.error["type"] == "InvalidOutput"
    assert project.graph("twice").startswith("flowchart TD")
    assert project.graph("twice", format="dot").startswith("digraph")
    with pytest.raises(UsageError):
        project.graph("twice", format="png")


def test_a_bad_output_fails_a_run_as_it_fails_a_call(root: Path) -> None:
    project = wfops.Project(root)
    run = project.run("lies.local")
    assert run.status == "failed" and run.error["type"] == "InvalidOutput"
    with pytest.raises(CallFailed) as info:
        project.call("calc.liar", {"n": 1})
    assert info.value.error["type"] == run.error["type"]
    assert info.value.error["message"] == run.error["message"]


def test_a_stuck_sync_node_does_not_hold_the_caller(root: Path, released: list) -> None:
    project = wfops.Project(root)
    results: list = []
    driver = threading.Thread(target=lambda: results.append(project.run("hangs.local")), daemon=True)
    driver.start()
    driver.join(timeout=60)  # a guard against a hang, not a speed check
    node = sys.modules["calcops"]
    released.append(node.RELEASE)
    assert not driver.is_alive(), "the run waited for the stuck node"
    [run] = results
    assert run.status == "failed" and run.error["type"] == "Timeout"
    assert node.STARTED.is_set() and not node.RELEASE.is_set()  # returned while the node was still stuck
    [entry] = project.trace(run.run_id)
    took = (datetime.fromisoformat(entry.ended_at.rstrip("Z")) -
            datetime.fromisoformat(entry.started_at.rstrip("Z"))).total_seconds()
    assert took < 0.5 + 1.0  # the step's own record: its timeout plus one second


def test_project_not_found_and_store_only(tmp_path: Path, root: Path) -> None:
    with pytest.raises(ProjectNotFound):
        wfops.Project(tmp_path / "nowhere")
    run = wfops.Project(root, db=tmp_path / "runs.db").run("twice.local")
    history = wfops.Project(tmp_path, db=tmp_path / "runs.db")  # no project here: the store alone
    assert [r.run_id for r in history.runs()] == [run.run_id]
    with pytest.raises(ProjectNotFound):
        history.validate()


def test_init_schema_and_standalone_files(tmp_path: Path) -> None:
    made = wfops.init(tmp_path / "new")
    assert "sources.yaml" in made.written and (tmp_path / "new/sources.yaml").is_file()
    assert wfops.Project(tmp_path / "new").validate().ok
    with pytest.raises(UsageError):
        wfops.init(tmp_path / "new")
    assert json.loads(wfops.schema("deployment"))["title"].startswith("wfops deployment")
    loose = tmp_path / "loose.yaml"
    loose.write_text("hello: world\n")
    assert [d.code for d in wfops.validate_files([str(loose)]).diagnostics] == ["unknown-kind"]
