"""The run gate's record, written: a deployment whose inputs are unchanged starts from what the
last full gate decided (`wfops.fastpath.gate`, which reads the record and says what it holds).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.atomic import write_atomic
from wfops.canonical import canonical_json
from wfops.compiler.artifact import MISSING
from wfops.errors import WfopsError
from wfops.fastpath.gate import RECORDS, Ready, contracts_match, record_path, recorded
from wfops.fastpath.output_order import declared_outputs
from wfops.fastpath.snapshot import build, file_hash, listing
from wfops.loader.project import LOCK_FILE, SOURCES_FILE
from wfops.runner.sources import used_refs, used_sources
from wfops.statedir import make_state_dir

if TYPE_CHECKING:
    from wfops.compiler.validate import Validation
    from wfops.lock.build import CompiledProject
    from wfops.lock.gate import Gate
    from wfops.sources.base import Capability

# The hit side lives with the other fast paths; the run glue imports both sides from here.
__all__ = ["RECORDS", "Ready", "called", "contracts_match", "from_gate", "record_path", "recorded", "save",
           "save_compiled"]


def _called_names(steps: Iterable[Mapping[str, Any]]) -> list[str]:
    """The workflows a normalized workflow calls, in `called_workflows` order."""
    names: list[str] = []
    for step in steps:
        name = step.get("workflow")
        if isinstance(name, str) and name not in names:
            names.append(name)
        for branch in (step.get("parallel") or {}).values():
            names.extend(n for n in _called_names(branch) if n not in names)
    return names


def from_gate(gate: Gate, **rest: Any) -> Ready:
    """What the full gate decided, as a run starts from it."""
    assert gate.workflow is not None
    return Ready(gate.workflow, dict(gate.workflows), dict(gate.artifacts), dict(gate.normalized),
                 dict(gate.bindings), warnings=list(gate.warnings), **rest)


def called(ready: Ready) -> list[tuple[str, str]]:
    """(concrete source, capability) of every call the run's workflows make."""
    out: list[tuple[str, str]] = []
    for ref in used_refs(ready.workflows.values()):
        logical, _, name = ref.partition(".")
        pair = (ready.bindings.get(logical, logical), name)
        if pair not in out:
            out.append(pair)
    return out


def save(root: Path, deployment: str, validation: Validation, ready: Ready,
         live: Mapping[str, Mapping[str, Capability]]) -> None:
    """Record the full gate's decision for `deployment` (best effort: a read-only checkout runs
    uncached). Called after the gate passed and the sources the run calls are open. The
    canonical texts it writes are kept on `ready` too, for the store to write the same."""
    project = validation.project
    loaded = project.deployments[deployment]
    read = [loaded.file, *(project.workflows[wf].file for wf in ready.workflows), SOURCES_FILE, LOCK_FILE]
    files: dict[str, str | None] = {rel: file_hash(root / rel) for rel in read}
    order = sorted(ready.normalized)
    contracts: dict[str, str] = {}
    for source_id, name in called(ready):
        cap = live.get(source_id, {}).get(name)
        if cap is None:
            return  # nothing to compare a later run against: do not record
        contracts[f"{source_id}.{name}"] = cap.contract_hash
    entry = {
        "deployment": deployment, "snapshot": build(root, files, names=listing(root)),
        "workflow": ready.workflow, "artifacts": ready.artifacts, "normalized": order,
        "children": {digest: {name: ready.artifacts.get(name, MISSING) for name in _called_names(form["steps"])}
                     for digest, form in ready.normalized.items()},
        "bindings": ready.bindings, "input": ready.input, "secrets": ready.secrets,
        "warnings": [d.to_dict(subject=True) for d in ready.warnings],
        "source_ids": ready.source_ids, "sources": _declarations(validation, ready.source_ids),
        "contracts": contracts, "executor": ready.executor, "outputs": declared_outputs(ready.workflows, ready.artifacts),
    }
    target = record_path(root, deployment)
    try:
        texts = [ready.texts.get(digest) or canonical_json(ready.normalized[digest]) for digest in order]
        ready.texts.update(zip(order, texts, strict=True))
        make_state_dir(target.parent)  # refuses a symlink on the way: the record is then skipped
        # Keys as the gate gave them (not sorted): a run from the record stores its input in the
        # order the full gate would, the deployment's defaults first.
        write_atomic(target, "\n".join([json.dumps(entry), *texts, ""]), durable=False)
    except (OSError, WfopsError, TypeError, ValueError):  # TypeError/ValueError: input defaults that are not JSON
        pass


def save_compiled(root: Path, validation: Validation, compiled: CompiledProject) -> None:
    """After `compile` wrote wfops.lock: record each deployment's gate as its first run's full
    gate would, from the validation compile already did, so that run starts from the record
    instead of checking everything again. A deployment whose gate does not pass, or whose run
    calls an MCP server (the record compares with contracts the open servers report, and
    compile has none open by then), is left to its first run."""
    # deferred: the lock's gate, only when compile (not a run from its record) needs it
    from wfops.lock.gate import check_deployment
    from wfops.sources.executor import ExecutorChoice

    for name in sorted(validation.project.deployments):
        gate = check_deployment(validation, name, compiled=compiled)
        if not gate.ok:
            continue
        ids = used_sources(gate.workflows.values(), gate.bindings)
        opened = {i: validation.sources[i] for i in ids if i in validation.sources}
        if len(opened) != len(ids) or any(source.kind == "mcp" for source in opened.values()):
            continue
        deployment = validation.project.deployments[name].model
        ready = from_gate(gate, input=dict(deployment.input), secrets=list(deployment.secrets),
                          sources=dict(validation.sources), source_ids=ids,
                          executor=ExecutorChoice.of_deployment(deployment.executor).name)
        save(root, name, validation, ready, {i: dict(source.capabilities()) for i, source in opened.items()})


def _declarations(validation: Validation, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    declared = validation.project.sources.model.sources if validation.project.sources is not None else {}
    out: dict[str, dict[str, Any]] = {}
    for source_id in ids:
        if source_id == "std":
            out[source_id] = {"kind": "std"}
            continue
        spec = declared[source_id]
        if spec.kind == "python":
            out[source_id] = {"kind": "python", "module": spec.module}
        else:
            out[source_id] = {"kind": spec.kind, "spec": spec.to_data()}
    return out
