"""Workflow artifacts: the canonical normalized form of a workflow, and its hash.

The normalized form is plain JSON data that `load_artifact` loads back
(alias keys `with`, `if`, `else`), so the runner can store it and rebuild the
workflow on resume. Normalizing makes equal meaning give equal bytes:

- defaults are filled in (`start`, `reducer`, foreach `mode`, retry numbers...),
- `next: X` becomes `on: {ok: X}`,
- optional keys left unset (None) are dropped, so `description: null` == no description,
- key order and YAML formatting/comments never reach the hash (canonical JSON).

An artifact hash covers the whole tree: it is sha256 of
`{"workflow": <normalized>, "subworkflows": {name: artifact hash}}`, so pinning a
workflow also pins every subworkflow it calls. A child that is missing or part
of a cycle is recorded as "missing" / "cycle" (validation reports it as an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wfops.canonical import canonical_json, sha256
from wfops.model.kinds import walk_steps
from wfops.model.objects import ParallelStep, Step, Workflow
from wfops.model.plain import built, validated

MISSING = "missing"
CYCLE = "cycle"


def normalize_workflow(workflow: Workflow) -> dict[str, Any]:
    """The canonical normalized form of one workflow (without its subworkflows)."""
    data = workflow.to_data(drop_none=True)
    data["start"] = workflow.start_step
    data["steps"] = [_normalize_step(step) for step in workflow.steps]
    return data


def _normalize_step(step: Step) -> dict[str, Any]:
    # Model fields left unset (None) are dropped; a null inside user data (`with: {x: null}`,
    # a schema's `default: null`) is meaning and stays.
    data = step.to_data(drop_none=True)
    if isinstance(step, ParallelStep):
        data["parallel"] = {name: [_normalize_step(s) for s in steps] for name, steps in step.parallel.items()}
    if "next" in step.__dict__ or "on" in step.__dict__:
        data.pop("next", None)
        data["on"] = step.routes()
    return data


def called_workflows(workflow: Workflow) -> list[str]:
    """Names of the workflows this one calls directly (subworkflow and foreach steps), in order."""
    names: list[str] = []
    for _at, step in walk_steps(workflow.steps):
        name = getattr(step, "workflow", None)
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def artifact_hash(normalized: Mapping[str, Any], subworkflows: Mapping[str, str]) -> str:
    return text_hash(canonical_json(dict(normalized)).encode("utf-8"), subworkflows)


def text_hash(text: bytes, subworkflows: Mapping[str, str]) -> str:
    """The artifact hash of a normalized workflow given as its canonical JSON (UTF-8): sha256 of
    the canonical JSON of `{"workflow": ..., "subworkflows": ...}`, assembled around `text` (sorted
    keys put `subworkflows` first), so a holder of the text checks it without parsing it."""
    digest = sha256(b'{"subworkflows":')
    digest.update(canonical_json(dict(subworkflows)).encode("utf-8"))
    digest.update(b',"workflow":')
    digest.update(text)
    digest.update(b"}")
    return str(digest.hexdigest())


class ArtifactSet:
    """Normalized forms and tree hashes of every workflow of a project, computed once each."""

    def __init__(self, workflows: Mapping[str, Workflow]) -> None:
        self.workflows = workflows
        self.normalized: dict[str, dict[str, Any]] = {}
        self.hashes: dict[str, str] = {}
        self.children: dict[str, dict[str, str]] = {}

    def hash_of(self, name: str) -> str:
        return self._hash(name, ())

    def _hash(self, name: str, visiting: tuple[str, ...]) -> str:
        if name in self.hashes:
            return self.hashes[name]
        if name not in self.workflows:
            return MISSING
        if name in visiting:
            return CYCLE
        workflow = self.workflows[name]
        normalized = self.normalized.setdefault(name, normalize_workflow(workflow))
        children = {child: self._hash(child, (*visiting, name)) for child in called_workflows(workflow)}
        digest = artifact_hash(normalized, children)
        if CYCLE not in children.values():  # a hash seen mid-cycle depends on the entry point
            self.children[name] = children
            self.hashes[name] = digest
        return digest

    def tree(self, name: str) -> list[str]:
        """`name` and every workflow it reaches, each once, root first."""
        seen: list[str] = []
        stack = [name]
        while stack:
            current = stack.pop(0)
            if current in seen or current not in self.workflows:
                continue
            seen.append(current)
            stack.extend(called_workflows(self.workflows[current]))
        return seen


def load_artifact(normalized: Mapping[str, Any]) -> Workflow:
    """Rebuild a workflow from its stored normalized form. The gate passed that form and its
    artifact hash addresses it, so it is built from the declaration without being checked
    again; only a form that does not fit it (a required key missing) is validated."""
    loaded = built("workflow", normalized) or validated("workflow", dict(normalized))
    assert isinstance(loaded, Workflow)
    return loaded
