"""`wfops check`: clean after compile, and each drift code from a real edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import cli


def compile_and_commit(root: Path) -> None:
    assert cli("compile", "--project", str(root)) == 0


def check(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[dict]]:
    capsys.readouterr()
    code = cli("check", "--project", str(root), "--format", "json", *extra)
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is (code == 0)
    return code, report["diagnostics"]


def codes(diagnostics: list[dict]) -> list[str]:
    return [d["code"] for d in diagnostics if d["severity"] == "error"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_fresh_lock_is_clean(project: Path, capsys) -> None:
    compile_and_commit(project)
    assert check(project, capsys) == (0, [])


def test_no_lock_is_stale_lock_with_compile_hint(project: Path, capsys) -> None:
    code, found = check(project, capsys)
    assert code == 1 and codes(found) == ["stale-lock"]
    assert found[0]["file"] == "wfops.lock" and "wfops compile" in found[0]["hint"]


def test_comments_and_key_order_keep_check_clean(project: Path, capsys) -> None:
    compile_and_commit(project)
    wf = project / "workflows/hello.yaml"
    text = wf.read_text()
    text = text.replace("# the root workflow", "# a different comment\n# and another")
    text = text.replace("with: {name: $input.name}\n    save: {text: state.text}",
                        "save:   {text: state.text}   # moved\n    with:\n      name: $input.name")
    text = text.replace("next: loud", "on: {ok: loud}")  # same meaning, other spelling
    wf.write_text(text)
    assert check(project, capsys) == (0, [])


def test_workflow_edit_is_stale_lock_at_the_changed_step(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "workflows/hello.yaml", "with: {name: $input.name}", "with: {name: $input.name, times: 2}")
    code, found = check(project, capsys)
    assert code == 1
    stale = [d for d in found if d["code"] == "stale-lock" and d["file"] == "workflows/hello.yaml"]
    assert stale and "step `greet` changed" in stale[0]["message"]
    assert (stale[0]["line"], stale[0]["column"]) == (10, 5)  # the `- id: greet` step
    # The deployment that runs it is stale too, at its `workflow:` key.
    dep = [d for d in found if d["file"] == "deployments/hello.local.yaml"]
    assert dep and dep[0]["code"] == "stale-lock" and dep[0]["line"] == 2


def test_subworkflow_edit_names_the_subworkflow_in_the_parent(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "workflows/loud.yaml", "on: {ok: end, empty: end}", "on: {ok: end, empty: end}\n    timeout: 3")
    code, found = check(project, capsys)
    messages = {d["file"]: d["message"] for d in found}
    assert code == 1
    assert "step `shout` changed" in messages["workflows/loud.yaml"]
    assert "subworkflow `loud` changed" in messages["workflows/hello.yaml"]


def test_input_field_type_change_is_capability_drift_naming_the_field(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "nodes/ops.py", "    times: int = 1", "    times: str = '1'")
    code, found = check(project, capsys)
    drift = [d for d in found if d["code"] == "capability-drift"]
    assert code == 1 and len(drift) == 1
    assert "ops.greet" in drift[0]["message"]
    assert "input field `times` type integer -> string" in drift[0]["message"]
    assert (drift[0]["file"], drift[0]["line"], drift[0]["column"]) == ("workflows/hello.yaml", 11, 11)  # its `uses:` value


def test_outcome_added_is_capability_drift(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "nodes/ops.py", 'outcomes=["ok", "empty"]', 'outcomes=["ok", "empty", "quiet"]')
    _, found = check(project, capsys)
    drift = [d for d in found if d["code"] == "capability-drift"]
    assert drift and "outcome `quiet` added" in drift[0]["message"]


def test_removed_node_is_capability_missing(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "nodes/ops.py", "@wfops.node(outcomes", "def _gone(): pass\n\n\n# @wfops.node(outcomes")
    code, found = check(project, capsys)
    missing = [d for d in found if d["code"] == "capability-missing"]
    assert code == 1 and missing and "ops.shout" in missing[0]["message"]
    assert missing[0]["file"] == "workflows/loud.yaml"


def test_removed_source_is_source_missing(project: Path, capsys) -> None:
    compile_and_commit(project)
    (project / "sources.yaml").write_text("sources: {}\n")
    code, found = check(project, capsys)
    assert code == 1 and "source-missing" in codes(found)
    missing = next(d for d in found if d["code"] == "source-missing")
    assert "'ops'" in missing["message"] and missing["file"].startswith("workflows/")


def test_pin_to_an_old_artifact_is_pin_mismatch(project: Path, capsys) -> None:
    compile_and_commit(project)
    old = json.loads((project / "wfops.lock").read_text())["workflows"]["hello"]["hash"]
    edit(project / "deployments/hello.local.yaml", "workflow: hello", f"workflow: hello@sha256:{old[:12]}")
    compile_and_commit(project)
    assert check(project, capsys) == (0, [])
    edit(project / "workflows/hello.yaml", "output: {text: $state.text}", "output: {said: $state.text}")
    code, found = check(project, capsys)
    pin = [d for d in found if d["code"] == "pin-mismatch"]
    assert code == 1 and len(pin) == 1
    assert (pin[0]["file"], pin[0]["line"]) == ("deployments/hello.local.yaml", 2)
    assert old[:12] in pin[0]["message"]


def test_deployment_to_unknown_workflow_fails_check(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "deployments/hello.local.yaml", "workflow: hello", "workflow: nosuch")
    code, found = check(project, capsys)
    assert code == 1
    assert {"unknown-workflow", "stale-lock"} & set(codes(found))


def test_removed_workflow_points_at_its_lock_line(project: Path, capsys) -> None:
    compile_and_commit(project)
    (project / "deployments/hello.local.yaml").unlink()
    code, found = check(project, capsys)
    gone = [d for d in found if d["file"] == "wfops.lock"]
    assert code == 1 and gone and "hello.local" in gone[0]["message"] and gone[0]["line"] > 1


def test_corrupt_lock_is_a_diagnostic_not_a_crash(project: Path, capsys) -> None:
    (project / "wfops.lock").write_text("[1, 2")
    code, found = check(project, capsys)
    assert code == 1 and codes(found) == ["corrupt-lock"]


def test_text_and_github_formats(project: Path, capsys) -> None:
    capsys.readouterr()
    assert cli("check", "--project", str(project)) == 1
    assert "error[stale-lock]" in capsys.readouterr().out
    assert cli("check", "--project", str(project), "--format", "github") == 1
    assert "::error file=wfops.lock" in capsys.readouterr().out
    assert cli("check", "--project", str(project), "--format", "nope") == 2


def test_docstring_only_change_warns_but_passes(project: Path, capsys) -> None:
    compile_and_commit(project)
    edit(project / "nodes/ops.py", '"""Say hello."""', '"""Say hello, politely."""')
    code, found = check(project, capsys)
    assert code == 0 and [(d["code"], d["severity"]) for d in found] == [("stale-lock", "warning")]
    assert "description" in found[0]["message"]


def test_a_source_that_fails_to_import_is_not_called_missing(project: Path, capsys) -> None:
    compile_and_commit(project)
    (project / "nodes/ops.py").write_text("raise RuntimeError('boom')\n")
    code, found = check(project, capsys)
    assert code == 1 and "source-missing" not in codes(found)
    assert any("boom" in d["message"] for d in found)
