"""No workflow may call itself, directly or through other workflows."""

from __future__ import annotations

from wfops.compiler.checks.context import CheckContext
from wfops.compiler.checks.envs import children


def check_cycles(ctx: CheckContext) -> None:
    graph = {name: [child for _, child in children(loaded) if child in ctx.workflows]
             for name, loaded in ctx.workflows.items()}
    for name, loaded in ctx.workflows.items():
        for at, child in children(loaded):
            if child not in graph:
                continue
            back = _path(graph, child, name)
            if back is not None:
                chain = " -> ".join([name, *back])
                what = "itself" if child == name else f"`{child}`, which leads back to `{name}`: {chain}"
                ctx.sink.error("subworkflow-cycle", f"workflow `{name}` calls {what}", loaded,
                               (*at, "workflow"),
                               hint="break the cycle: a workflow cannot run itself; use a foreach or a "
                               "condition loop inside one workflow instead")


def _path(graph: dict[str, list[str]], start: str, goal: str) -> list[str] | None:
    """A call chain from `start` to `goal` (breadth first, so the shortest), or None."""
    previous: dict[str, str | None] = {start: None}
    queue = [start]
    for current in queue:
        if current == goal:
            chain = [current]
            while previous[chain[-1]] is not None:
                chain.append(previous[chain[-1]])  # type: ignore[arg-type]
            return list(reversed(chain))
        for nxt in graph.get(current, []):
            if nxt not in previous:
                previous[nxt] = current
                queue.append(nxt)
    return None
