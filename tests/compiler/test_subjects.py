"""Each finding names what it is about (workflow, deployment, source, step) in fields,
so callers never search the message text; the JSON format keeps its seven keys."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compiler.conftest import CORPUS
from tests.compiler.test_environments import ALT, SOURCES_WITH_ALT, USES_NOTES
from wfops.compiler.validate import validate_project
from wfops.diagnostics import Diagnostic, error


def only(root: Path, code: str, file: str | None = None) -> Diagnostic:
    found = [d for d in validate_project(root).diagnostics if d.code == code and (file is None or d.file == file)]
    assert len(found) == 1, found
    return found[0]


def corpus(name: str) -> dict[str, str]:
    return {f"workflows/{name}.yaml": (CORPUS / f"{name}.yaml").read_text()}


def test_unknown_capability_names_workflow_step_and_source(project) -> None:
    d = only(project(corpus("unknown-capability")), "unknown-capability")
    assert d.subject() == {"workflow": "unknown-cap", "step": "a", "source": "nodes"}


def test_unknown_source_in_a_uses_names_the_missing_source(project) -> None:
    d = only(project(corpus("unknown-source")), "unknown-source")
    assert d.subject() == {"workflow": "unknown-source", "step": "a", "source": "nowhere"}


def test_duplicate_step_names_the_second_step(project) -> None:
    d = only(project(corpus("duplicate-step")), "duplicate-step")
    assert (d.workflow, d.step, d.deployment, d.source) == ("dup", "a", None, None)


def test_unrouted_outcome_names_workflow_and_step(project) -> None:
    d = only(project(corpus("unrouted-outcome")), "unrouted-outcome")
    assert d.subject() == {"workflow": "unrouted", "step": "search"}


def test_workflow_level_finding_has_no_step(project) -> None:
    d = only(project(corpus("invalid-start")), "invalid-start")
    assert d.subject() == {"workflow": "bad-start"}


# The binding-environment project of test_environments, without its MCP source.
SOURCES_WITH_ALT_NO_MCP = SOURCES_WITH_ALT.replace("  clock: {kind: mcp, command: [python, -m, mcp_server_time]}\n", "")


def test_finding_under_some_deployments_names_them(project) -> None:
    files = {"workflows/counter.yaml": USES_NOTES, "sources.yaml": SOURCES_WITH_ALT_NO_MCP, "alt.py": ALT,
             "deployments/d1.yaml": "name: d1\nworkflow: counter\nbindings: {notes: nodes}\n",
             "deployments/d2.yaml": "name: d2\nworkflow: counter\nbindings: {notes: alt}\n"}
    d = only(project(files), "unrouted-outcome")
    assert d.message.endswith("(under deployment `d2`)")
    assert d.subject() == {"workflow": "counter", "step": "a", "deployment": "d2"}
    d3 = {"deployments/d3.yaml": "name: d3\nworkflow: counter\nbindings: {notes: alt}\n"}
    d = only(project(d3), "unrouted-outcome")
    assert d.deployment == "d2, d3"


def test_finding_under_every_deployment_names_them_all_with_a_plain_message(project) -> None:
    broken = USES_NOTES.replace("with: {text: hi}", "with: {text: 3}")
    d = only(project({"workflows/counter.yaml": broken,
                      "deployments/d1.yaml": "name: d1\nworkflow: counter\nbindings: {notes: nodes}\n"}),
             "type-mismatch")
    assert d.subject() == {"workflow": "counter", "step": "a", "deployment": "d1"}
    assert "under deployment" not in d.message


def test_deployment_file_findings_name_the_deployment(project) -> None:
    root = project({"deployments/d1.yaml": "name: d1\nworkflow: chlid\nbindings: {notes: nodez}\n"})
    assert only(root, "unknown-workflow").subject() == {"deployment": "d1", "workflow": "chlid"}
    assert only(root, "unknown-source").subject() == {"deployment": "d1", "workflow": "chlid", "source": "nodez"}


def test_source_import_error_names_the_source(project) -> None:
    root = project({"nodes.py": "raise RuntimeError('boom')\n"})
    d = only(root, "source-import-error")
    assert d.subject() == {"source": "nodes"}
    root = project({"sources.yaml": "sources:\n  gone: {kind: python, module: not_here}\n"})
    assert only(root, "source-error").subject() == {"source": "gone"}


def test_schema_errors_read_the_subject_from_the_raw_file(project) -> None:
    wf = "name: typo\nsteps:\n  - id: a\n    uses: nodes.count\n    wiht: {text: x}\n    next: end\n"
    root = project({"workflows/typo.yaml": wf,
                    "sources.yaml": "sources:\n  nodes: {kind: python, module: nodes, extra: 1}\n",
                    "deployments/d.yaml": "name: d\nworkflow: typo@sha256:abcd\ndrift: maybe\n"})
    assert only(root, "unknown-key", "workflows/typo.yaml").subject() == {"workflow": "typo", "step": "a"}
    assert only(root, "unknown-key", "sources.yaml").subject() == {"source": "nodes"}
    assert only(root, "invalid-value", "deployments/d.yaml").subject() == {"deployment": "d", "workflow": "typo"}


def test_duplicate_workflow_names_it(project) -> None:
    root = project({"workflows/a.yaml": "name: same\nsteps:\n  - {id: x, end: done}\n",
                    "workflows/b.yaml": "name: same\nsteps:\n  - {id: y, end: done}\n"})
    assert only(root, "duplicate-workflow").subject() == {"workflow": "same"}


def test_standalone_text_findings_carry_the_subject() -> None:
    from wfops.compiler.standalone import validate_text

    text = "name: solo\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    on: {ok: end, odd: end}\n"
    found = validate_text(text, "workflow")
    assert [(d.code, d.subject()) for d in found] == [("undeclared-outcome", {"workflow": "solo", "step": "a"})]


def test_json_shape_keeps_seven_keys_and_subject_is_separate() -> None:
    from wfops.report.json_report import as_data

    d = error("unknown-capability", "m", "workflows/a.yaml", (3, 4), "h", workflow="a", step="s", source="x")
    assert list(d.to_dict()) == ["severity", "code", "message", "file", "line", "column", "hint"]
    assert list(as_data([d])["diagnostics"][0]) == list(d.to_dict())
    assert d.to_dict(subject=True) == {**d.to_dict(), "workflow": "a", "deployment": None, "source": "x",
                                       "step": "s"}
    assert Diagnostic(**d.to_dict(subject=True)) == d


def test_sarif_results_carry_the_subject_in_properties() -> None:
    from wfops.report.sarif import as_data

    with_subject = error("unknown-capability", "m", "workflows/a.yaml", workflow="a", step="s")
    plain = error("yaml-syntax", "m", "workflows/b.yaml")
    results = as_data([with_subject, plain])["runs"][0]["results"]
    assert results[0]["properties"] == {"workflow": "a", "step": "s"}
    assert "properties" not in results[1]


def test_cache_round_trips_the_subject(tmp_path: Path) -> None:
    from wfops.fastpath import cache, replay

    found = [error("unknown-capability", "m", "workflows/a.yaml", (2, 3), "h", workflow="a", step="s",
                   source="x", deployment="d")]
    cache.store(tmp_path, {}, found, {"deployments/d.yaml": "d"})
    assert cache.lookup(tmp_path) == (found, {"deployments/d.yaml": "d"})
    assert cache.lookup(tmp_path)[0][0].subject() == found[0].subject()  # type: ignore[index]
    stored = json.loads((tmp_path / replay.CACHE_FILE).read_text())["diagnostics"][0]
    assert stored["source"] == "x"
