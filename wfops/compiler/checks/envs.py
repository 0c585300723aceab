"""Which binding environments each workflow is checked under.

A deployment's bindings apply to its workflow and, transitively, to every
subworkflow it calls. A workflow no deployment reaches is checked with the
identity environment (each logical source is the concrete source of that id).
"""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import IDENTITY, Env
from wfops.loader.project import Loaded, Project
from wfops.model.kinds import walk_steps


def children(loaded: Loaded) -> list[tuple[tuple[Any, ...], str]]:
    """(step document path, child workflow name) for every subworkflow or foreach-over-workflow
    step, those in parallel branches included."""
    found = []
    for at, step in walk_steps(loaded.model.steps):
        name = getattr(step, "workflow", None)
        if isinstance(name, str):
            found.append((at, name))
    return found


def environments(project: Project) -> dict[str, list[Env]]:
    reached: dict[str, list[Env]] = {name: [] for name in project.workflows}
    for name in sorted(project.deployments):
        model = project.deployments[name].model
        env = Env(name, dict(model.bindings), frozenset(model.secrets))
        pending, seen = [model.workflow_name], set()
        while pending:
            current = pending.pop()
            if current in seen or current not in project.workflows:
                continue
            seen.add(current)
            reached[current].append(env)
            pending.extend(child for _, child in children(project.workflows[current]))
    return {name: envs or [IDENTITY] for name, envs in reached.items()}
