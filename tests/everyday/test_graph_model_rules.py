"""The graph draws the new keys: a conditional branch's edge is dashed and says `when`; each
typed catch entry is its own dashed edge, labelled with the error types it takes; a foreach
names its item."""

from __future__ import annotations

from tests.everyday.test_graph import dot_edges, mermaid_edges
from wfops.model.plain import validated
from wfops.report.graph import graph_parts, render_graph

WORKFLOW = {"name": "g", "steps": [
    {"id": "par", "parallel": {"main": [{"id": "m", "uses": "std.echo", "with": {"value": 1}, "next": "end"}],
                               "notify": [{"id": "n", "uses": "std.echo", "with": {"value": 2}, "next": "end"}]},
     "when": {"notify": {"eq": ["$input.notify", True]}}, "next": "call"},
    {"id": "call", "uses": "std.echo", "with": {"value": 3}, "next": "end",
     "catch": [{"errors": ["Timeout", "SourceLost"], "next": "slow"}, {"next": "broken"}]},
    {"id": "slow", "end": "slow"}, {"id": "broken", "end": "broken"},
    {"id": "each", "foreach": "$input.docs", "as": "doc", "uses": "std.echo", "with": {"value": "$doc"}, "next": "end"}]}


def test_conditional_branches_and_typed_catches_are_drawn() -> None:
    workflow = validated("workflow", WORKFLOW)
    nodes, _ = graph_parts(workflow)
    key = {n.step: n.key for n in nodes}
    want = {(key["par"], "main", key["par/main/m"], False), (key["par"], "notify (when)", key["par/notify/n"], True),
            (key["call"], "catch Timeout, SourceLost", key["slow"], True), (key["call"], "catch", key["broken"], True)}
    for edges in (mermaid_edges(render_graph(workflow, "mermaid")), dot_edges(render_graph(workflow, "dot"))):
        assert want <= edges
    assert "foreach $input.docs as $doc" in render_graph(workflow, "mermaid")
