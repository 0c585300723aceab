"""Draw a workflow as Mermaid (GitHub renders it) or Graphviz DOT.

Every step is a node whose shape says its kind; every routed outcome is an edge
labelled with the outcome; `catch` edges are dashed; `next: end` leads to one
shared `end` node and each `end: X` step is a terminal node of its own. A parallel step
forks into one box (subgraph) per branch, holding the branch's steps; the branches' routes
to `end` meet at the step's join node, from which its own routes leave. `taken`
(a run's top-level step ids, in order; `"end"` for the end node) highlights the
path a run took.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wfops.errors import UsageError
from wfops.model.kinds import catches
from wfops.model.objects import (
    CallStep,
    ConditionStep,
    EndStep,
    ForeachStep,
    InterruptStep,
    ParallelStep,
    Step,
    SubworkflowStep,
    Workflow,
)

FORMATS = ("mermaid", "dot")
END = "end"

# kind -> (mermaid open, mermaid close, dot shape)
_SHAPES: dict[str, tuple[str, str, str]] = {
    "call": ('["', '"]', "box"),
    "workflow": ('[["', '"]]', "box3d"),
    "condition": ('{"', '"}', "diamond"),
    "foreach": ('{{"', '"}}', "hexagon"),
    "parallel": ('[/"', '"/]', "parallelogram"),
    "join": ('[\\"', '"/]', "invtrapezium"),
    "interrupt": ('>"', '"]', "cds"),
    "end": ('(["', '"])', "doubleoctagon"),
}


@dataclass(frozen=True, slots=True)
class Node:
    key: str      # the id used in the drawing (never a keyword like `end`)
    step: str     # the step id, or `end`
    kind: str     # a key of _SHAPES, or "terminal"
    label: tuple[str, ...]
    group: str | None = None  # the parallel branch it belongs to: `<step>/<branch>`


@dataclass(frozen=True, slots=True)
class Edge:
    source: str   # step id
    target: str   # step id or `end`
    label: str
    dashed: bool = False


def graph_parts(workflow: Workflow) -> tuple[list[Node], list[Edge]]:
    """The nodes and edges of a workflow, in step order (shared by both formats)."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    if _steps(workflow.steps, nodes, edges, "s", "", END, None):
        nodes.append(Node("done", END, "terminal", ("end",)))
    return nodes, edges


def _steps(steps: list[Step], nodes: list[Node], edges: list[Edge], key: str, scope: str, end: str,
           group: str | None) -> bool:
    """Add the nodes and edges of a list of steps; whether a route leads to `end`. `scope`
    prefixes the step ids of a branch (`par/a/`) and `end` is where its `end` routes go."""
    uses_end = False
    for index, step in enumerate(steps):
        me = scope + step.id
        nodes.append(Node(f"{key}{index}", me, step.kind, (step.id, *_detail(step)), group))
        source = me
        branches = getattr(step, "parallel", None) or {}
        if branches:
            source = f"{me}/join"
            nodes.append(Node(f"{key}{index}j", source, "join", ("join",), group))
            conditional = getattr(step, "when", None) or {}
            for b, (name, inner) in enumerate(branches.items()):
                inner_scope = f"{me}/{name}/"
                _steps(inner, nodes, edges, f"{key}{index}b{b}s", inner_scope, source, f"{me}/{name}")
                # A conditional branch may be skipped: its edge says so, dashed like a catch.
                edges.append(Edge(me, inner_scope + inner[0].id, f"{name} (when)" if name in conditional else name,
                                  dashed=name in conditional))
        for outcome, target in step.routes().items():
            edges.append(Edge(source, _target(target, scope, end), outcome))
            uses_end = uses_end or target == END
        for catch in catches(step):
            label = "catch" if not catch.errors else "catch " + ", ".join(catch.errors)
            edges.append(Edge(me, _target(catch.next, scope, end), label, dashed=True))
            uses_end = uses_end or catch.next == END
    return uses_end


def _target(target: str, scope: str, end: str) -> str:
    return end if target == END else scope + target


def _detail(step: Step) -> tuple[str, ...]:
    if isinstance(step, CallStep):
        return (step.uses, "cached") if step.cache not in (None, False) else (step.uses,)
    if isinstance(step, SubworkflowStep):
        return (f"workflow {step.workflow}",)
    if isinstance(step, ConditionStep):
        return (_condition_text(step.if_),)
    if isinstance(step, ForeachStep):
        body = step.uses or f"workflow {step.workflow}"
        named = f" as ${step.as_}" if step.as_ != "item" else ""
        return (f"foreach {step.foreach}{named}", f"{body} ({step.mode})")
    if isinstance(step, InterruptStep):
        return (f"interrupt: {step.interrupt}",)
    if isinstance(step, ParallelStep):
        return (f"parallel: {', '.join(step.parallel)}",)
    if isinstance(step, EndStep):
        return (f"end: {step.end}",)
    return ()


_OPERATORS = {"eq": "==", "ne": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<=", "in": "in"}


def _condition_text(condition: Any, limit: int = 48) -> str:
    """`{and: [{exists: $state.x}, {gt: [$state.n, 1]}]}` -> `exists $state.x and $state.n > 1`."""
    text = _condition(condition, top=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _condition(condition: Any, top: bool = False) -> str:
    if not isinstance(condition, dict) or len(condition) != 1:
        return _operand(condition)
    ((op, operand),) = condition.items()
    if op in ("and", "or") and isinstance(operand, list):
        joined = f" {op} ".join(_condition(c) for c in operand)
        return joined if top else f"({joined})"
    if op == "not":
        return f"not {_condition(operand)}"
    if op == "exists":
        return f"exists {_operand(operand)}"
    if op in _OPERATORS and isinstance(operand, list) and len(operand) == 2:
        return f"{_operand(operand[0])} {_OPERATORS[op]} {_operand(operand[1])}"
    return _operand(condition)


def _operand(value: Any) -> str:
    if isinstance(value, str) and value.startswith("$") and not value.startswith("$$"):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render_graph(workflow: Workflow, fmt: str = "mermaid", taken: Sequence[str] | None = None,
                 cached: Sequence[str] = ()) -> str:
    """The drawing as text. `taken` highlights the steps (and the edges between them) a run took;
    `cached`, the steps of those it was served from the step cache."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown graph format {fmt!r}", hint="use mermaid or dot")
    nodes, edges = graph_parts(workflow)
    path = list(taken or [])
    on_path = set(path)
    taken_edges = {(a, b) for a, b in zip(path, path[1:], strict=False)}
    render = _mermaid if fmt == "mermaid" else _dot
    return render(workflow, nodes, edges, on_path, taken_edges, set(cached))


def _mermaid(workflow: Workflow, nodes: list[Node], edges: list[Edge], on_path: set[str],
             taken_edges: set[tuple[str, str]], cached: set[str]) -> str:
    keys = {n.step: n.key for n in nodes}
    lines = ["flowchart TD", '    start(("start"))']
    for group, members in _grouped(nodes):
        if group is not None:
            lines.append(f'    subgraph {members[0].key}g["{_mm("branch " + group.rsplit("/", 1)[-1])}"]')
        for node in members:
            if node.kind == "terminal":
                lines.append(f'    {node.key}((("end")))')
                continue
            opening, closing, _ = _SHAPES[node.kind]
            label = "<br/>".join(_mm(part) for part in node.label)
            lines.append(f"    {node.key}{opening}{label}{closing}")
        if group is not None:
            lines.append("    end")
    drawn: list[bool] = []
    start = workflow.start_step
    if start in keys:  # an invalid `start` is validate's to report; draw the rest
        lines.append(f"    start --> {keys[start]}")
        drawn.append(start in on_path)
    for edge in edges:
        target = keys.get(edge.target)
        if target is None:  # a broken route: validate reports it; draw what exists
            continue
        arrow = "-.->" if edge.dashed else "-->"
        lines.append(f'    {keys[edge.source]} {arrow}|"{_mm(edge.label)}"| {target}')
        drawn.append((edge.source, edge.target) in taken_edges)
    if on_path:
        lines.append("    classDef taken fill:#d4f7d4,stroke:#1a7f37,stroke-width:3px")
        highlighted = [n.key for n in nodes if n.step in on_path]
        if highlighted:
            lines.append(f"    class {','.join(highlighted)} taken")
        indexes = [str(i) for i, hit in enumerate(drawn) if hit]
        if indexes:
            lines.append(f"    linkStyle {','.join(indexes)} stroke:#1a7f37,stroke-width:3px")
    served = [n.key for n in nodes if n.step in cached]
    if served:  # after `taken`: a served step shows as served
        lines.append("    classDef cached fill:#dbeafe,stroke:#1d4ed8,stroke-width:3px,stroke-dasharray:5 3")
        lines.append(f"    class {','.join(served)} cached")
    return "\n".join(lines) + "\n"


def _grouped(nodes: list[Node]) -> list[tuple[str | None, list[Node]]]:
    """The nodes outside any branch first, then each branch's, in drawing order (branch boxes
    are drawn side by side, never nested in the drawing even when the steps nest)."""
    groups: dict[str | None, list[Node]] = {None: []}
    for node in nodes:
        groups.setdefault(node.group, []).append(node)
    return [(group, members) for group, members in groups.items() if members]


def _mm(text: str) -> str:
    """Escape text for a quoted Mermaid label (`#` first: Mermaid reads `#...;` as an entity)."""
    return (text.replace("#", "#35;").replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
            .replace(">", "#gt;").replace("|", "#124;"))


def _dot(workflow: Workflow, nodes: list[Node], edges: list[Edge], on_path: set[str],
         taken_edges: set[tuple[str, str]], cached: set[str]) -> str:
    keys = {n.step: n.key for n in nodes}
    lines = [f"digraph {_dq(workflow.name)} {{", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=11];', '  edge [fontname="Helvetica", fontsize=10];',
             '  start [label="start", shape=circle, width=0.3];']
    for group, members in _grouped(nodes):
        if group is not None:
            lines.append(f"  subgraph cluster_{members[0].key} {{")
            lines.append(f"  label={_dq('branch ' + group.rsplit('/', 1)[-1])};")
        for node in members:
            shape = "doublecircle" if node.kind == "terminal" else _SHAPES[node.kind][2]
            extra = ', style="filled,bold", fillcolor="#d4f7d4", color="#1a7f37"' if node.step in on_path else ""
            if node.step in cached:
                extra = ', style="filled,dashed,bold", fillcolor="#dbeafe", color="#1d4ed8"'
            lines.append(f"  {node.key} [label={_dq(chr(10).join(node.label))}, shape={shape}{extra}];")
        if group is not None:
            lines.append("  }")
    start = workflow.start_step
    if start in keys:
        lines.append(f"  start -> {keys[start]}{_dot_taken(start in on_path, [])};")
    for edge in edges:
        target = keys.get(edge.target)
        if target is None:
            continue
        attrs = [f"label={_dq(edge.label)}"] + (["style=dashed"] if edge.dashed else [])
        taken = (edge.source, edge.target) in taken_edges
        lines.append(f"  {keys[edge.source]} -> {target}{_dot_taken(taken, attrs)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_taken(taken: bool, attrs: list[str]) -> str:
    if taken:
        attrs = [*attrs, 'color="#1a7f37"', "penwidth=2.5"]
    return f" [{', '.join(attrs)}]" if attrs else ""


def _dq(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
