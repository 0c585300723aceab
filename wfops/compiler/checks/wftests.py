"""Static checks of workflow test files against the project (docs/testing.md).

A test file must name a workflow of the project; its mock keys, interrupt answers and
expected path must name steps of that workflow's tree (the workflow and every
subworkflow it reaches), and its capability refs name ones some step of that tree uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wfops.compiler.artifact import ArtifactSet
from wfops.diagnostics import Diagnostic, error
from wfops.loader.project import Loaded, Project
from wfops.loader.wftests import find_test_files, load_test_files
from wfops.model.kinds import walk_steps

if TYPE_CHECKING:
    from wfops.model.objects import Workflow

_INDEX = re.compile(r"\[\d+\]$")


@dataclass
class Tree:
    """What a test may name of a workflow and the workflows it reaches."""

    root: str
    workflows: dict[str, Workflow] = field(default_factory=dict)
    steps: set[str] = field(default_factory=set)        # every step id of the tree
    interrupts: set[str] = field(default_factory=set)   # ids of interrupt steps
    calls: set[str] = field(default_factory=set)        # ids of steps that call a capability (`uses:`)
    top: set[str] = field(default_factory=set)          # the root's step ids
    refs: set[str] = field(default_factory=set)         # logical refs used by `uses:`


def workflow_tree(workflows: Mapping[str, Workflow], root: str) -> Tree:
    tree = Tree(root)
    for name in ArtifactSet(workflows).tree(root):
        workflow = workflows[name]
        tree.workflows[name] = workflow
        for _at, step in walk_steps(workflow.steps):
            tree.steps.add(step.id)
            tree.steps.update(getattr(step, "parallel", None) or {})  # `par/<branch>/<step>` keys
            if step.kind == "interrupt":
                tree.interrupts.add(step.id)
            uses = getattr(step, "uses", None)
            if isinstance(uses, str):
                tree.refs.add(uses)
                tree.calls.add(step.id)
    tree.top = {step.id for step in workflows[root].steps}
    return tree


def step_ids(key: str) -> list[str]:
    """The step ids a step key names: `fetch`, `sub/fetch` or `fan[2]` (each segment's id)."""
    return [_INDEX.sub("", part) for part in key.split("/")]


def is_ref(key: str) -> bool:
    return "." in key


def check_test_files(project: Project, tests: Iterable[Loaded]) -> list[Diagnostic]:
    workflows = {name: loaded.model for name, loaded in project.workflows.items()}
    found: list[Diagnostic] = []
    for loaded in tests:
        found.extend(check_test_file(project, workflows, loaded))
    return found


def check_test_file(project: Project, workflows: Mapping[str, Workflow], loaded: Loaded) -> list[Diagnostic]:
    model, doc, file = loaded.model, loaded.doc, loaded.file
    found: list[Diagnostic] = []
    if model.workflow not in workflows:
        if any(f.startswith("workflows/") for f in project.broken_files):
            return []  # perhaps the workflow is in a file that does not load (reported there)
        known = ", ".join(sorted(workflows)) or "none"
        return [error("unknown-test-workflow", f"no workflow named {model.workflow!r} (known: {known})", file,
                      doc.at(("workflow",)), hint="use the `name:` of a workflow in workflows/",
                      workflow=model.workflow)]
    if model.deployment is not None and model.deployment not in project.deployments:
        known = ", ".join(sorted(project.deployments)) or "none"
        found.append(error("unknown-test-workflow", f"no deployment named {model.deployment!r} (known: {known})",
                           file, doc.at(("deployment",)), hint="use the `name:` of a deployment in deployments/",
                           deployment=model.deployment))
    tree = workflow_tree(workflows, model.workflow)
    names: set[str] = set()
    for i, case in enumerate(model.cases):
        where = ("cases", i)
        if case.name in names:
            found.append(error("duplicate-test-case", f"case name {case.name!r} is used twice", file,
                               doc.at((*where, "name")), hint="give each case a unique name"))
        names.add(case.name)
        for key in case.mocks:
            at = doc.at((*where, "mocks", key), key=True)
            if is_ref(key):
                if key not in tree.refs:
                    found.append(_unknown_ref(file, at, key, tree, "mocks"))
            elif any(part not in tree.steps for part in step_ids(key)) or step_ids(key)[-1] not in tree.calls:
                found.append(_unknown_step(file, at, key, tree, "mocks"))
        for key in case.interrupts:
            at = doc.at((*where, "interrupts", key), key=True)
            if any(part not in tree.steps for part in step_ids(key)) or step_ids(key)[-1] not in tree.interrupts:
                known = ", ".join(sorted(tree.interrupts)) or "none"
                found.append(error("unknown-test-step", f"{key!r} is not an interrupt step of {tree.root} "
                                   f"(interrupt steps: {known})", file, at,
                                   hint="answer interrupts by their step id", workflow=tree.root))
        for j, ref in enumerate(case.real):
            if ref not in tree.refs:
                found.append(_unknown_ref(file, doc.at((*where, "real", j)), ref, tree, "real"))
        for j, step in enumerate(case.expect.path or []):
            if step != "end" and step not in tree.top:
                found.append(error("unknown-test-step", f"expect.path: {step!r} is not a step of {tree.root}", file,
                                   doc.at((*where, "expect", "path", j)),
                                   hint="the path lists the top-level step ids taken (and `end` after "
                                        "`next: end`)", workflow=tree.root))
    return found


def _unknown_ref(file: str, at: tuple[int, int], ref: str, tree: Tree, where: str) -> Diagnostic:
    known = ", ".join(sorted(tree.refs)) or "none"
    return error("unknown-test-ref", f"{where}: no step of {tree.root} (or its subworkflows) uses {ref!r} "
                 f"(used: {known})", file, at, hint="write the logical ref exactly as in `uses:`",
                 workflow=tree.root)


def _unknown_step(file: str, at: tuple[int, int], key: str, tree: Tree, where: str) -> Diagnostic:
    return error("unknown-test-step", f"{where}: {key!r} names no step of {tree.root} (or its subworkflows) "
                 "that calls a capability", file, at, hint="a key without a dot is a step id or trace path (`sub/fetch`, `fan[2]`); "
                 "a capability ref has a dot", workflow=tree.root)


def test_file_findings(project: Project) -> list[Diagnostic]:
    """Load and check the project's test files (`tests/**/*.wftest.yaml`), for `wfops validate`."""
    loaded, found = load_test_files(project.root, find_test_files(project.root))
    return found + check_test_files(project, loaded)
