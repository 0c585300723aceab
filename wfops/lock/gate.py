"""The run gate: may this deployment run now, and with which artifacts?

One function for the runner. It refuses (ok False, `diagnostics` say why) when
the project has errors, the deployment is unknown, the lock is missing or stale
for this deployment or its workflows, a pin mismatches, or a contract the
deployment uses drifted from the lock under `drift: fail`. Under `drift: warn`
drift lands in `warnings` and the run may go on.

Contracts compared: python and std sources as imported now (validation's
catalog), MCP sources as the runner found them live (`live_catalog`); an MCP
source the runner did not pass is not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wfops.compiler.artifact import ArtifactSet, called_workflows
from wfops.diagnostics import Diagnostic, error
from wfops.errors import WfopsError
from wfops.lock.build import CompiledProject, compile_project
from wfops.lock.drift import LockLines, Scope, compare, compare_contracts, pin_mismatches
from wfops.lockfile import LOCK_NAME, lock_path, read_lock

if TYPE_CHECKING:
    from wfops.compiler.validate import Validation
    from wfops.model.objects import Workflow
    from wfops.sources.base import Capability


@dataclass
class Gate:
    ok: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)   # errors that refuse the run
    warnings: list[Diagnostic] = field(default_factory=list)      # drift under `drift: warn`, etc.
    workflows: dict[str, Workflow] = field(default_factory=dict)  # root + every subworkflow it needs
    artifacts: dict[str, str] = field(default_factory=dict)       # workflow name -> artifact hash
    normalized: dict[str, dict[str, Any]] = field(default_factory=dict)  # hash -> normalized workflow
    bindings: dict[str, str] = field(default_factory=dict)        # logical source -> concrete id
    workflow: str | None = None                                   # the root workflow's name
    # The compiled project the decision was made on, for a second look with live contracts.
    compiled: CompiledProject | None = field(default=None, repr=False, compare=False)


def check_deployment(validation: Validation, name: str, *,
                     live_catalog: Mapping[str, Mapping[str, Capability]] | None = None,
                     unlocked: bool = False, compiled: CompiledProject | None = None) -> Gate:
    """Decide whether deployment `name` may run. Never raises for bad projects: see `Gate.diagnostics`.

    `unlocked`: the working tree as it is (the dev loop): the project must still be valid and
    its pins must match, but the lock is neither read nor compared. `compiled`: this very
    validation's `compile_project`, when the caller has it (compile, which gates every
    deployment: hashing a large project once per deployment dominated it)."""
    project = validation.project
    loaded = project.deployments.get(name)
    if loaded is None:
        known = ", ".join(sorted(project.deployments)) or "none"
        # Every error: a deployment file that does not load may be the one that was meant.
        return Gate(ok=False, diagnostics=[*(d for d in validation.diagnostics if d.is_error), error(
            "unknown-deployment", f"no deployment named {name!r} (known: {known})", "deployments",
            hint="see deployments/*.yaml for the `name:` of each deployment", deployment=name)])
    errors = deployment_errors(validation, name)
    if errors:
        return Gate(ok=False, diagnostics=errors)

    if compiled is None:
        compiled = compile_project(validation)
    entry = compiled.deployments[name]
    root = entry["workflow"]
    assert compiled.artifacts is not None
    tree = compiled.artifacts.tree(root)
    scope = Scope(workflows=frozenset(tree), deployments=frozenset({name}))
    refusals: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    try:
        lock = None if unlocked else read_lock(project.root)
    except WfopsError as exc:
        return Gate(ok=False, diagnostics=[error("corrupt-lock", exc.message, LOCK_NAME, hint=exc.hint)])
    text = lock_path(project.root).read_text(encoding="utf-8") if lock is not None else None

    if lock is None and not unlocked:
        refusals += compare(validation, compiled, None, None)
    elif lock is not None:
        # Structure: the lock must describe these very artifacts and bindings.
        structural = [d for d in compare(validation, compiled, lock, text, scope)
                      if d.code not in ("capability-drift", "capability-missing", "source-missing")]
        refusals += [d for d in structural if d.is_error]
        warnings += [d for d in structural if not d.is_error]
        # Contracts: apply the deployment's drift policy.
        catalog = {**validation.catalog, **{k: dict(v) for k, v in (live_catalog or {}).items()}}
        usages = {key: [u for u in users if u.deployment == name]
                  for key, users in compiled.usages.items()}
        policy = loaded.model.drift
        drift = compare_contracts(validation, usages, catalog, lock, LockLines(text), scope, drift_policy=policy)
        refusals += [d for d in drift if d.is_error]
        warnings += [d for d in drift if not d.is_error]
    refusals += [d for d in pin_mismatches(validation, compiled, scope) if d not in refusals]

    artifacts = {wf: compiled.artifacts.hash_of(wf) for wf in tree}
    return Gate(
        ok=not refusals, diagnostics=refusals, warnings=warnings,
        workflows={wf: project.workflows[wf].model for wf in tree},
        artifacts=artifacts,
        normalized={artifacts[wf]: compiled.artifacts.normalized[wf] for wf in tree},
        bindings=dict(entry["bindings"]), workflow=root, compiled=compiled,
    )


def deployment_errors(validation: Validation, name: str) -> list[Diagnostic]:
    """The project's errors that concern deployment `name`: those of its own file, of the
    workflows it reaches, of the sources it calls, of sources.yaml and the lock as a whole.
    An error in an unrelated workflow or deployment does not refuse it (`validate` and
    `check` still report every error)."""
    project = validation.project
    deployment = project.deployments[name]
    models = {wf: loaded.model for wf, loaded in project.workflows.items()}
    tree = ArtifactSet(models).tree(deployment.model.workflow_name)
    # Names the tree calls, loaded or not: a workflow that does not load is still reached.
    reached = {deployment.model.workflow_name, *tree, *(child for wf in tree for child in called_workflows(models[wf]))}
    complete = reached <= set(models)  # else the missing one may be in a file that does not load
    used = {deployment.model.concrete_source(ref.partition(".")[0])
            for wf in tree for step in models[wf].steps
            if isinstance(ref := getattr(step, "uses", None), str)}
    other_files = {loaded.file for wf, loaded in project.workflows.items() if wf not in tree} | \
        {loaded.file for other, loaded in project.deployments.items() if other != name}
    if complete:
        other_files |= project.broken_files - {deployment.file, *(project.workflows[wf].file for wf in tree)}
        other_files -= {"sources.yaml", LOCK_NAME}

    def concerns(d: Diagnostic) -> bool:
        if d.deployment is not None:
            return name in (part.strip() for part in d.deployment.split(","))
        if d.workflow is not None:
            return d.workflow in reached
        if d.source is not None:
            return d.source in used
        return d.file not in other_files

    return [d for d in validation.diagnostics if d.is_error and concerns(d)]
