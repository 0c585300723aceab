"""Unique step ids and a valid `start`."""

from __future__ import annotations

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.names import suggest
from wfops.loader.project import Loaded


def check_structure(loaded: Loaded, sink: Sink) -> None:
    seen: dict[str, int] = {}
    for index, step in enumerate(loaded.model.steps):
        if step.id in seen:
            sink.error("duplicate-step", f"step id `{step.id}` is already used by step {seen[step.id] + 1}",
                       loaded, ("steps", index, "id"), hint=f"rename one of them, e.g. `{step.id}_2`")
        else:
            seen[step.id] = index
    start = loaded.model.start
    if start is not None and start not in seen:
        sink.error("invalid-start", f"`start: {start}` names no step of this workflow", loaded, ("start",),
                   hint=suggest(start, list(seen), "write the id of the first step"))
