"""`render_graph` and `wfops graph`: every step and every routed outcome is drawn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.everyday.helpers import REPO
from tests.harness import cli
from wfops.loader.yaml import load_yaml_text
from wfops.model.objects import Workflow
from wfops.model.plain import validated
from wfops.report.graph import graph_parts, render_graph

ALL_KINDS = """
name: kinds
state: {items: {type: array}, err: {type: object}, ok: {type: boolean}}
steps:
  - id: call
    uses: std.echo
    with: {value: 1}
    on: {ok: cond}
    catch: {next: recover, save: state.err}
  - id: cond
    if: {and: [{exists: $state.ok}, {not: {eq: [$state.ok, false]}}]}
    then: loop
    else: child
  - id: loop
    foreach: $state.items
    uses: std.echo
    with: {value: $item}
    mode: parallel
    next: ask
  - id: child
    workflow: other
    on: {ok: ask, partial: stop}
  - id: ask
    interrupt: approval
    request: {q: "a \\"quoted\\" <thing> | pipe"}
    on: {approved: end, rejected: stop}
  - id: recover
    uses: std.echo
    with: {value: 2}
    next: end
  - id: stop
    end: stopped
"""


def kinds() -> Workflow:
    return validated("workflow", load_yaml_text(ALL_KINDS, "kinds.yaml").data)


def example(name: str) -> Workflow:
    return validated("workflow", load_yaml_text((REPO / "workflows" / f"{name}.yaml").read_text(), "x").data)


def mermaid_edges(text: str) -> set[tuple[str, str, str, bool]]:
    found = set()
    for m in re.finditer(r"^\s+(\w+) (-->|-\.->)\|\"([^\"]*)\"\| (\w+)$", text, re.M):
        found.add((m.group(1), m.group(3), m.group(4), m.group(2) == "-.->"))
    return found


def dot_edges(text: str) -> set[tuple[str, str, str, bool]]:
    found = set()
    for m in re.finditer(r"^\s+(\w+) -> (\w+) \[label=\"([^\"]*)\"(, style=dashed)?", text, re.M):
        found.add((m.group(1), m.group(3), m.group(2), bool(m.group(4))))
    return found


def expected_edges(workflow: Workflow) -> set[tuple[str, str, str, bool]]:
    nodes, _ = graph_parts(workflow)
    key = {n.step: n.key for n in nodes}
    edges = set()
    for step in workflow.steps:
        for outcome, target in step.routes().items():
            edges.add((key[step.id], outcome, key[target], False))
        catch = getattr(step, "catch", None)
        if catch:
            edges.add((key[step.id], "catch", key[catch.next], True))
    return edges


@pytest.mark.parametrize("workflow", [kinds(), *(example(n) for n in ("meeting-report", "approval", "fanout", "greet-one"))],
                         ids=lambda w: w.name)
def test_every_step_and_route_is_drawn_in_both_formats(workflow: Workflow) -> None:
    mermaid, dot = render_graph(workflow, "mermaid"), render_graph(workflow, "dot")
    nodes, _ = graph_parts(workflow)
    for step in workflow.steps:
        key = next(n.key for n in nodes if n.step == step.id)
        assert re.search(rf"^\s+{key}\W.*{re.escape(step.id)}", mermaid, re.M), step.id
        assert re.search(rf"^\s+{key} \[label=\"{re.escape(step.id)}", dot, re.M), step.id
    want = expected_edges(workflow)
    assert mermaid_edges(mermaid) == want
    assert dot_edges(dot) == want
    assert mermaid.startswith("flowchart TD\n") and dot.startswith(f'digraph "{workflow.name}" {{')


def test_kinds_have_distinct_shapes_and_end_is_not_a_mermaid_keyword() -> None:
    mermaid = render_graph(kinds(), "mermaid")
    assert '    s0["call<br/>std.echo"]' in mermaid
    assert '    s1{"cond<br/>exists $state.ok and not $state.ok == false"}' in mermaid
    assert mermaid.count("{{") == 1 and "[[" in mermaid and '    s4>"ask' in mermaid
    assert '    s6(["stop<br/>end: stopped"])' in mermaid
    assert '    done((("end")))' in mermaid
    assert not re.search(r"\bend\b\s*$", mermaid.split("\n", 1)[1].replace('"end"', ""), re.M)
    dot = render_graph(kinds(), "dot")
    for shape in ("box", "diamond", "hexagon", "box3d", "cds", "doubleoctagon", "doublecircle"):
        assert f"shape={shape}" in dot


def test_labels_are_escaped() -> None:
    workflow = validated("workflow", {"name": "esc", "steps": [
        {"id": "a", "if": {"eq": ['x"y<z>|', 1]}, "then": "b", "else": "b"}, {"id": "b", "end": "done"}]})
    mermaid = render_graph(workflow, "mermaid")
    line = next(line for line in mermaid.splitlines() if line.startswith("    s0{"))
    assert '"' not in line[len('    s0{"'):-2] and "<" not in line.replace("<br/>", "") and "|" not in line
    dot = render_graph(workflow, "dot")
    assert '\\"x\\\\\\"y' in dot or 'x\\\\\\"y' in dot


def test_taken_path_is_highlighted() -> None:
    workflow = example("meeting-report")
    mermaid = render_graph(workflow, "mermaid", taken=["read", "extract", "render", "end"])
    assert "    class s0,s1,s2,done taken" in mermaid
    # edges in drawing order: start->read, read->extract, extract->render, extract->nothing, render->end
    assert "    linkStyle 0,1,2,4 stroke:" in mermaid
    plain = render_graph(workflow, "mermaid")
    assert "classDef" not in plain and "linkStyle" not in plain
    dot = render_graph(workflow, "dot", taken=["read", "extract", "nothing"])
    assert re.search(r'  s3 \[label="nothing.*fillcolor', dot)
    assert re.search(r'  s1 -> s3 \[label="empty", color=', dot)
    assert not re.search(r'  s1 -> s2 \[label="ok", color=', dot)


def test_graph_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert cli("graph", "meeting-report") == 0
    assert capsys.readouterr().out.startswith("flowchart TD\n")
    assert cli("graph", "approval", "--format", "dot") == 0
    assert capsys.readouterr().out.startswith('digraph "approval"')


def test_graph_cli_errors(capsys: pytest.CaptureFixture[str], make_project) -> None:
    root: Path = make_project({"workflows/broken.yaml": "name: broken\nsteps: 3\n"})
    assert cli("graph", "nope", "--project", str(root)) == 1
    assert capsys.readouterr().err.startswith("wfops: error: unknown workflow 'nope'")
    assert cli("graph", "broken", "--project", str(root)) == 1
    assert "does not load" in capsys.readouterr().err
    assert cli("graph", "broken", "--format", "svg", "--project", str(root)) == 2
    assert "unknown graph format 'svg'" in capsys.readouterr().err


def test_broken_routes_and_start_are_skipped_not_fatal() -> None:
    workflow = validated("workflow", {"name": "broken", "start": "nowhere", "steps": [
        {"id": "a", "uses": "std.echo", "with": {"value": 1}, "on": {"ok": "missing", "other": "a"}}]})
    for fmt in ("mermaid", "dot"):
        text = render_graph(workflow, fmt, taken=["a", "ghost"])
        assert "missing" not in text and "s0" in text
    assert '    s0 -->|"other"| s0' in render_graph(workflow, "mermaid")
