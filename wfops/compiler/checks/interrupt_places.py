"""Where a run cannot wait for input: a foreach body and a parallel branch. An `interrupt:`
step there (directly, or in any workflow run from there) fails at run time, so it is an
error here, naming the chain of workflows that leads to it."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.envs import children
from wfops.loader.project import Loaded
from wfops.model.kinds import walk_steps


def check_interrupt_places(loaded: Loaded, sink: Sink, workflows: dict[str, Loaded]) -> None:
    for at, step in walk_steps(loaded.model.steps):
        name = getattr(step, "workflow", None)
        if getattr(step, "foreach", None) is not None and isinstance(name, str):
            found = _interrupt_under(name, workflows)
            if found is not None:
                chain, interrupt = found
                sink.error("interrupt-in-foreach", f"step `{step.id}` runs workflow `{name}` for each item, and "
                           f"`{chain[-1]}` waits at interrupt step `{interrupt}`{_via(chain)}: a foreach body "
                           "cannot wait for input", loaded, (*at, "workflow"),
                           hint="move the interrupt before or after the foreach step (ask once for all items), "
                           "or run the items one by one with a subworkflow step")
        for branch, steps in (getattr(step, "parallel", None) or {}).items():
            _check_branch(loaded, sink, workflows, step.id, branch, steps, (*at, "parallel", branch))


def _check_branch(loaded: Loaded, sink: Sink, workflows: dict[str, Loaded], parallel: str, branch: str,
                  steps: list[Any], at: tuple[Any, ...]) -> None:
    hint = "ask before the parallel step (or after it, once the branches joined)"
    for where, inner in walk_steps(steps, at):
        if getattr(inner, "interrupt", None) is not None:
            sink.error("interrupt-in-parallel", f"branch `{branch}` of parallel step `{parallel}` waits at "
                       f"interrupt step `{inner.id}`: a branch cannot wait for input", loaded, where, hint=hint)
            continue
        name = getattr(inner, "workflow", None)
        found = _interrupt_under(name, workflows) if isinstance(name, str) else None
        if found is not None and getattr(inner, "foreach", None) is None:  # a foreach is reported above
            chain, interrupt = found
            sink.error("interrupt-in-parallel", f"branch `{branch}` of parallel step `{parallel}` runs workflow "
                       f"`{name}`, and `{chain[-1]}` waits at interrupt step `{interrupt}`{_via(chain)}: a branch "
                       "cannot wait for input", loaded, (*where, "workflow"), hint=hint)


def _via(chain: list[str]) -> str:
    return "" if len(chain) == 1 else " (through " + " -> ".join(f"`{c}`" for c in chain) + ")"


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
        for _, step in walk_steps(workflows[current].model.steps):
            if getattr(step, "interrupt", None) is not None:
                return chain, step.id
        pending.extend([*chain, child] for _, child in reversed(children(workflows[current])))
    return None
