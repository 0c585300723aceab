"""A run of an unchanged deployment starts from its gate record (`.wfops/cache/runs/`).

After a run passes the full gate, `wfops.runner.gate_record.save` writes what the gate decided
to `.wfops/cache/runs/<hash of the deployment name>.json`: the artifacts and normalized
workflows, bindings, input defaults, secrets, the gate's warnings, how to build each source it
calls, the contract hash of every capability it calls, and the snapshot of what the decision
depends on (`wfops.fastpath.snapshot`: the deployment file, every workflow it reaches,
sources.yaml and wfops.lock by content, every wfops file by name, the project's python, the
modules loaded from outside it, the installed packages, this wfops). Any difference is a miss:
the full gate runs. On a hit the sources are still opened (a run needs them) and the contracts
they report must equal the recorded ones, or the full gate runs (it reports the drift). An
OpenAPI or command source is built again from its recorded declaration, reading its document or
scripts: the snapshot holds those files by content (the source notes them as consulted), and its
contracts, which pin their sha256, are compared too.

The file is one line of JSON (the decision), then the canonical JSON of each recorded
normalized workflow, one per line. A hit checks each against its artifact hash by hashing
those bytes (no re-serialization), parses each once, and hands the same text to the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.compiler.artifact import MISSING, text_hash
from wfops.diagnostics import Diagnostic
from wfops.fastpath.output_order import with_declared_output
from wfops.fastpath.snapshot import unchanged
from wfops.redact import declare_names
from wfops.sources.registry import load_declared_data, load_mcp_source, load_python_source
from wfops.sources.std import StdSource

if TYPE_CHECKING:
    from wfops.engine.plan import WorkflowSource
    from wfops.sources.base import Capability, Source

RECORDS = Path(".wfops") / "cache" / "runs"


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


def recorded(root: Path, deployment: str) -> Ready | None:
    """The recorded decision for `deployment`, or None on any miss (or an unreadable record)."""
    try:
        head, *lines = record_path(root, deployment).read_bytes().split(b"\n")
        entry = json.loads(head)
        if entry.get("deployment") != deployment or not unchanged(root, entry.get("snapshot")):
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
        outputs = entry.get("outputs") or {}
        normalized: dict[str, dict[str, Any]] = {
            digest: dict(with_declared_output(json.loads(text), outputs.get(digest))) for digest, text in texts.items()}
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
            mcp = load_mcp_source(root, source_id, spec["spec"])
            if mcp is None:
                return None  # not a declaration this wfops reads: the full gate decides
            built[source_id] = mcp
        elif spec["kind"] in ("openapi", "command"):
            # Built afresh, its document or scripts read now: its contracts (pinning their bytes)
            # are then compared with the recorded ones (`contracts_match`).
            declared = load_declared_data(root, source_id, spec["spec"])
            if declared is None:
                return None
            built[source_id] = declared
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
