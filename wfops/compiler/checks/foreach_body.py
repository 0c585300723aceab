"""A foreach body cannot wait at an interrupt: a foreach step whose workflow (or any
workflow it runs) has an `interrupt:` step fails at run time, so it is an error here."""

from __future__ import annotations

from wfops.compiler.checks.context import Sink, fields
from wfops.compiler.checks.envs import children
from wfops.loader.project import Loaded


def check_foreach_bodies(loaded: Loaded, sink: Sink, workflows: dict[str, Loaded]) -> None:
    for index, step in enumerate(loaded.model.steps):
        name = fields(step).get("workflow")
        if fields(step).get("foreach") is None or not isinstance(name, str) or name not in workflows:
            continue
        found = _interrupt_under(name, workflows)
        if found is None:
            continue
        chain, interrupt = found
        via = "" if len(chain) == 1 else " (through " + " -> ".join(f"`{c}`" for c in chain) + ")"
        sink.error("interrupt-in-foreach", f"step `{step.id}` runs workflow `{name}` for each item, and "
                   f"`{chain[-1]}` waits at interrupt step `{interrupt}`{via}: a foreach body cannot wait "
                   "for input", loaded, ("steps", index, "workflow"),
                   hint="move the interrupt before or after the foreach step (ask once for all items), or "
                   "run the items one by one with a subworkflow step")


def _interrupt_under(name: str, workflows: dict[str, Loaded]) -> tuple[list[str], str] | None:
    """(the chain of workflows from `name` to the one holding it, the interrupt step's id), depth first."""
    pending: list[list[str]] = [[name]]
    seen: set[str] = set()
    while pending:
        chain = pending.pop()
        current = chain[-1]
        if current in seen or current not in workflows:
            continue  # a cycle is reported by its own check
        seen.add(current)
        for step in workflows[current].model.steps:
            if fields(step).get("interrupt") is not None:
                return chain, step.id
        pending.extend([*chain, child] for _, child in reversed(children(workflows[current])))
    return None
