"""The run gate's record: a deployment whose inputs are unchanged starts from what the last
full gate decided, instead of validating and compiling the project again.

After a run passes the full gate, its decision is written to
`.wfops/cache/runs/<hash of the deployment name>.json`: the artifacts and normalized workflows, bindings,
input defaults, secrets, the gate's warnings, how to build each source it calls, and the
contract hash of every capability it calls. The record is keyed by the hashes of exactly
the files the deployment depends on: its deployment file, every workflow it reaches,
sources.yaml, wfops.lock, the names of the files in workflows/ and deployments/ (a new
file may take a name it resolves), every place under the project where importing the
python sources looked for a module (files that were imported, failed to import or did not
exist), and this wfops (code, version, Python). Any difference is a miss: the full gate
runs. On a hit the sources are still opened (a run needs them) and the contracts they
report must equal the recorded ones, or the full gate runs (it reports the drift).

The file is one line of JSON (the decision), then the canonical JSON of each recorded
normalized workflow, one per line. A hit checks each against its artifact hash by hashing
those bytes (no re-serialization), parses each once, and hands the same text to the store.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.atomic import write_atomic
from wfops.canonical import canonical_json
from wfops.compiler import cache
from wfops.compiler.artifact import MISSING, text_hash
from wfops.diagnostics import Diagnostic
from wfops.errors import WfopsError
from wfops.loader.project import LOCK_FILE, SOURCES_FILE
from wfops.model.objects import McpSource, SourcesFile
from wfops.model.plain import load as plain_load
from wfops.redact import declare_names
from wfops.runner.sources import used_refs
from wfops.sources.registry import load_python_source
from wfops.sources.std import StdSource
from wfops.statedir import make_state_dir

if TYPE_CHECKING:
    from wfops.compiler.validate import Validation
    from wfops.engine.plan import WorkflowSource
    from wfops.lock.gate import Gate
    from wfops.sources.base import Capability, Source

RECORDS = Path(".wfops") / "cache" / "runs"
FORMAT = 3  # 2: the deployment's executor; 3: the normalized workflows as canonical text lines
_LISTED = ("workflows", "deployments")


@dataclass
class Ready:
    """What a run starts from, whether the full gate decided it or its record."""

    workflow: str                                   # the root workflow's name
    workflows: dict[str, WorkflowSource]            # root + every subworkflow it needs: models after
                                                    # the full gate, normalized forms from a record
    artifacts: dict[str, str]                       # workflow name -> artifact hash
    normalized: dict[str, dict[str, Any]]           # artifact hash -> normalized workflow
    bindings: dict[str, str]                        # logical source -> concrete id
    warnings: list[Diagnostic] = field(default_factory=list)
    input: dict[str, Any] = field(default_factory=dict)   # the deployment's defaults
    secrets: list[str] = field(default_factory=list)
    sources: dict[str, Source] = field(default_factory=dict)  # at least every source the run calls
    source_ids: list[str] = field(default_factory=list)       # the ones it calls, in order
    contracts: dict[str, str] | None = None  # recorded "source.capability" -> contract hash
    executor: str = "local"                  # the deployment's `executor:` in `--executor` form
    texts: dict[str, str] = field(default_factory=dict)  # artifact hash -> canonical JSON of its normalized
                                                          # workflow, when at hand (read or written record)


def record_path(root: Path, deployment: str) -> Path:
    digest = hashlib.sha256(deployment.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return root / RECORDS / f"{digest}.json"


def _listing(root: Path) -> dict[str, list[str] | None]:
    out: dict[str, list[str] | None] = {}
    for folder in _LISTED:
        try:
            out[folder] = sorted(n for n in os.listdir(root / folder) if n.endswith((".yaml", ".yml")))
        except OSError:
            out[folder] = None
    return out


def recorded(root: Path, deployment: str) -> Ready | None:
    """The recorded decision for `deployment`, or None on any miss (or an unreadable record)."""
    try:
        head, *lines = record_path(root, deployment).read_bytes().split(b"\n")
        entry = json.loads(head)
        if entry.get("format") != FORMAT or entry.get("deployment") != deployment \
                or entry.get("tool") != cache.tool_fingerprint() or entry.get("listing") != _listing(root) \
                or not cache.places_unchanged(root, entry["files"]):
            return None
        declare_names(entry["secrets"])  # before any server starts: its stderr may quote them
        sources = _build_sources(root, entry["sources"])
        if sources is None:
            return None
        artifacts: dict[str, str] = dict(entry["artifacts"])
        order: list[str] = list(entry["normalized"])
        if len(lines) != len(order) + 1 or lines[-1] != b"" or set(order) != set(artifacts.values()):
            return None  # cut short, lines added, or a text no workflow uses: not what was written
        texts = dict(zip(order, lines[:-1], strict=True))
        if not _artifacts_intact(artifacts, texts, entry["children"]):
            return None
        # The engine plans from the normalized forms themselves: a hit builds no workflow model.
        normalized: dict[str, dict[str, Any]] = {digest: json.loads(text) for digest, text in texts.items()}
        return Ready(entry["workflow"], {wf: normalized[digest] for wf, digest in artifacts.items()},
                     artifacts, normalized, dict(entry["bindings"]),
                     warnings=[Diagnostic(**d) for d in entry["warnings"]],
                     input=dict(entry["input"]), secrets=list(entry["secrets"]),
                     sources=sources, source_ids=list(entry["source_ids"]), contracts=dict(entry["contracts"]),
                     executor=str(entry["executor"]),
                     texts={digest: text.decode("utf-8") for digest, text in texts.items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _artifacts_intact(artifacts: Mapping[str, str], texts: Mapping[str, bytes],
                      children: Mapping[str, Mapping[str, str]]) -> bool:
    """Every recorded workflow still hashes to its artifact hash, with the recorded hashes of
    the workflows it calls: a record edited or damaged by hand is a miss, not a run of something
    the gate never passed. The artifact hash covers the called names, so the recorded `children`
    of a text that hashes right are the ones the gate computed."""
    for digest in artifacts.values():
        called = children[digest]
        if any(artifacts.get(name, MISSING) != child for name, child in called.items()) \
                or text_hash(texts[digest], called) != digest:
            return False
    return True


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


def _build_sources(root: Path, specs: Mapping[str, Mapping[str, Any]]) -> dict[str, Source] | None:
    """The sources the run calls, built from their recorded declarations (None: one does not load)."""
    built: dict[str, Source] = {}
    for source_id, spec in specs.items():
        if spec["kind"] == "std":
            built[source_id] = StdSource()
        elif spec["kind"] == "python":
            try:
                built[source_id] = load_python_source(root, source_id, spec["module"])
            except (Exception, SystemExit):  # user code (WfopsError too): the full gate reports it
                return None
        elif spec["kind"] == "mcp":
            # deferred: wfops.sources.mcp imports logging and mcp, only for runs that call a server
            from wfops.sources.mcp import McpClientSource

            declared = plain_load("sources", {"sources": {source_id: spec["spec"]}})
            mcp = declared.sources[source_id] if isinstance(declared, SourcesFile) else None
            if not isinstance(mcp, McpSource):
                return None  # not a declaration this wfops reads: the full gate decides
            built[source_id] = McpClientSource(source_id, mcp, root)
        else:
            return None
    return built


def contracts_match(ready: Ready, live: Mapping[str, Mapping[str, Capability]]) -> bool:
    """Every capability the run calls reports the contract recorded with the decision."""
    if ready.contracts is None:
        return True
    for ref, digest in ready.contracts.items():
        source_id, _, name = ref.partition(".")
        cap = live.get(source_id, {}).get(name)
        if cap is None or cap.contract_hash != digest:
            return False
    return True


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
    files = [loaded.file, *(project.workflows[wf].file for wf in ready.workflows), SOURCES_FILE, LOCK_FILE]
    places: dict[str, str | None] = {rel: cache.file_hash(root / rel) for rel in files}
    places.update(cache.python_inputs(root))
    order = sorted(ready.normalized)
    contracts: dict[str, str] = {}
    for source_id, name in called(ready):
        cap = live.get(source_id, {}).get(name)
        if cap is None:
            return  # nothing to compare a later run against: do not record
        contracts[f"{source_id}.{name}"] = cap.contract_hash
    entry = {
        "format": FORMAT, "deployment": deployment, "tool": cache.tool_fingerprint(),
        "listing": _listing(root), "files": places,
        "workflow": ready.workflow, "artifacts": ready.artifacts, "normalized": order,
        "children": {digest: {name: ready.artifacts.get(name, MISSING) for name in _called_names(form["steps"])}
                     for digest, form in ready.normalized.items()},
        "bindings": ready.bindings, "input": ready.input, "secrets": ready.secrets,
        "warnings": [d.to_dict(subject=True) for d in ready.warnings],
        "source_ids": ready.source_ids, "sources": _declarations(validation, ready.source_ids),
        "contracts": contracts, "executor": ready.executor,
    }
    target = record_path(root, deployment)
    try:
        texts = [ready.texts.get(digest) or canonical_json(ready.normalized[digest]) for digest in order]
        ready.texts.update(zip(order, texts, strict=True))
        make_state_dir(root / RECORDS.parts[0])
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, "\n".join([json.dumps(entry, sort_keys=True), *texts, ""]), durable=False)
    except (OSError, WfopsError, TypeError, ValueError):  # TypeError/ValueError: input defaults that are not JSON
        pass


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
