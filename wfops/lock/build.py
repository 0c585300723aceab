"""Compile a validated project into the content of `wfops.lock` (in memory; nothing is written here).

Decisions (see docs/lock-and-drift.md):
- Every workflow is hashed, deployed or not.
- Capability contracts are snapshotted for every capability some workflow uses,
  under every binding environment: each deployment's bindings over its workflow
  tree, and the identity environment for every workflow. The platform source
  `std` is included (kind `platform`): a wfops upgrade that changes a std
  contract then shows up as drift instead of passing silently.
- A workflow's `requires` is keyed by its `uses` ref resolved with identity
  bindings (null when that logical source is only reachable through a deployment's
  bindings); a deployment's `requires` is keyed by the concrete ref its tree calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wfops.canonical import sha256_of
from wfops.compiler.artifact import ArtifactSet
from wfops.diagnostics import Diagnostic, warning
from wfops.lockfile import LOCK_VERSION, contract_entry
from wfops.model.kinds import walk_steps

if TYPE_CHECKING:
    from wfops.compiler.validate import Validation


@dataclass(frozen=True)
class Usage:
    """One step that calls a capability, for pointing diagnostics at it."""

    workflow: str
    step: str
    file: str
    at: tuple[int, int]
    deployment: str | None = None

    @property
    def label(self) -> str:
        return f"{self.workflow}:{self.step}"


@dataclass
class CompiledProject:
    workflows: dict[str, dict[str, Any]] = field(default_factory=dict)
    deployments: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: ArtifactSet | None = None
    # (concrete source, capability) -> the steps that call it
    # An insertion-ordered set per capability: big projects repeat the same usage often.
    usages: dict[tuple[str, str], dict[Usage, None]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_lock(self) -> dict[str, Any]:
        return {
            "version": LOCK_VERSION,
            "workflows": {name: {k: v for k, v in entry.items() if k != "normalized"}
                          for name, entry in self.workflows.items()},
            "deployments": self.deployments,
            "sources": self.sources,
        }


def split_ref(ref: str) -> tuple[str, str]:
    logical, _, name = ref.partition(".")
    return logical, name


def uses_refs(workflow: Any) -> list[tuple[tuple[Any, ...], str, str]]:
    """(step document path, step id, uses ref) of every capability call, foreach bodies and
    parallel branches included."""
    return [(at, step.id, step.uses) for at, step in walk_steps(workflow.steps)
            if isinstance(getattr(step, "uses", None), str)]


def source_kind(validation: Validation, source_id: str) -> str:
    if source_id == "std":
        return "platform"
    sources = validation.project.sources
    spec = sources.model.sources.get(source_id) if sources is not None else None
    return getattr(spec, "kind", "unknown")


def compile_project(validation: Validation) -> CompiledProject:
    """Hash every workflow, resolve every deployment and snapshot the contracts they use."""
    project = validation.project
    models = {name: loaded.model for name, loaded in project.workflows.items()}
    artifacts = ArtifactSet(models)
    out = CompiledProject(artifacts=artifacts)
    for name in sorted(models):
        out.workflows[name] = _workflow_entry(validation, artifacts, name, out)
    for name in sorted(project.deployments):
        out.deployments[name] = _deployment_entry(validation, artifacts, name, out)
    return out


def _workflow_entry(validation: Validation, artifacts: ArtifactSet, name: str,
                    out: CompiledProject) -> dict[str, Any]:
    loaded = validation.project.workflows[name]
    digest = artifacts.hash_of(name)
    requires: dict[str, str | None] = {}
    for at, step_id, ref in uses_refs(loaded.model):
        logical, cap_name = split_ref(ref)
        requires[ref] = _snapshot(validation, out, logical, cap_name, Usage(
            name, step_id, loaded.file, loaded.doc.at((*at, "uses"))))
    return {"file": loaded.file, "hash": digest, "normalized": artifacts.normalized.get(name),
            "subworkflows": artifacts.children.get(name, {}), "requires": requires,
            "parts": part_hashes(artifacts.normalized.get(name) or {})}


def _deployment_entry(validation: Validation, artifacts: ArtifactSet, name: str,
                      out: CompiledProject) -> dict[str, Any]:
    loaded = validation.project.deployments[name]
    deployment = loaded.model
    root = deployment.workflow_name
    bindings = dict(deployment.bindings)
    requires: dict[str, str | None] = {}
    for wf_name in artifacts.tree(root):
        wf_loaded = validation.project.workflows[wf_name]
        for at, step_id, ref in uses_refs(wf_loaded.model):
            logical, cap_name = split_ref(ref)
            concrete = deployment.concrete_source(logical)
            bindings.setdefault(logical, concrete)
            usage = Usage(wf_name, step_id, wf_loaded.file, wf_loaded.doc.at((*at, "uses")), deployment=name)
            requires[f"{concrete}.{cap_name}"] = _snapshot(validation, out, concrete, cap_name, usage)
    return {"file": loaded.file, "workflow": root, "pin": deployment.pin,
            "artifact": artifacts.hash_of(root) if root in artifacts.workflows else None,
            "bindings": bindings, "drift": deployment.drift, "secrets": sorted(deployment.secrets),
            "requires": requires, **schedule_part(deployment)}


def schedule_part(deployment: Any) -> dict[str, str]:
    """The lock's `schedule`: the hash of the entries with their defaults filled (so a changed
    schedule is a changed deployment); absent for a deployment without one."""
    if not deployment.schedule:
        return {}
    return {"schedule": sha256_of([entry.to_data() for entry in deployment.schedule])}


def _snapshot(validation: Validation, out: CompiledProject, source_id: str, cap_name: str,
              usage: Usage) -> str | None:
    """Record the contract of source_id.cap_name in the lock; its hash, or None when unknown."""
    out.usages.setdefault((source_id, cap_name), {})[usage] = None
    if source_id not in validation.sources:
        return None  # unknown source: validation reports it
    cap = validation.catalog.get(source_id, {}).get(cap_name)
    if cap is None:
        if source_kind(validation, source_id) == "mcp" and not any(
                d.code == "mcp-not-contacted" and d.source == source_id for d in out.diagnostics):
            out.diagnostics.append(warning(
                "mcp-not-contacted", f"MCP source {source_id!r} was not contacted: its contracts are not "
                "in the lock", usage.file, usage.at, hint="check the server starts, then run `wfops compile`",
                source=source_id, workflow=usage.workflow, step=usage.step, deployment=usage.deployment))
        return None
    entry = out.sources.setdefault(source_id, {"kind": source_kind(validation, source_id), "capabilities": {}})
    entry["capabilities"][cap_name] = contract_entry(cap)
    return cap.contract_hash


def part_hashes(normalized: dict[str, Any]) -> dict[str, str]:
    """Short hashes of each part of a normalized workflow, so `check` can say *what* changed."""
    parts = {f"step:{step.get('id')}": sha256_of(step)[:12] for step in normalized.get("steps", [])}
    parts["order"] = sha256_of([step.get("id") for step in normalized.get("steps", [])])[:12]
    for key, value in normalized.items():
        if key != "steps":
            parts[key] = sha256_of(value)[:12]
    return parts

