"""What the core API returns: plain, typed data. Faces render it; nothing here prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from wfops.api.findings import Report, _no_errors
from wfops.api.runs import Run, RunDetails
from wfops.diagnostics import Diagnostic

__all__ = ["CallOutcome", "CapabilityInfo", "Capabilities", "CompileReport", "CopyReport", "Report", "Run",
           "RunDetails"]


@dataclass(frozen=True)
class CompileReport:
    """`compile`: whether wfops.lock was written, what changed, and the findings."""

    written: bool
    diagnostics: list[Diagnostic]
    changes: list[str] = field(default_factory=list)         # lines such as "workflow x: hash a -> b"
    workflows: dict[str, str] = field(default_factory=dict)  # workflow -> artifact hash
    artifacts: list[str] = field(default_factory=list)       # artifact files written (`out=`)
    deployments: list[str] = field(default_factory=list)
    contracts: int = 0                                       # capability contracts in the lock
    lock: str = "wfops.lock"

    @property
    def ok(self) -> bool:
        return self.written

    @property
    def changed(self) -> bool:
        return bool(self.changes)


@dataclass(frozen=True)
class CapabilityInfo:
    """One capability of the catalog: concrete ref, docs, outcomes and contract."""

    ref: str
    source: str
    source_kind: str        # std, python or mcp
    name: str
    description: str
    outcomes: list[str]
    contract_hash: str
    origin: Literal["live", "lock"]  # lock: an MCP source's contract as wfops.lock holds it
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)  # e.g. an MCP tool's destructiveHint
    defaults: dict[str, Any] = field(default_factory=dict)  # retry/timeout a step gets unless it gives its own

    def to_dict(self, *, schemas: bool = True) -> dict[str, Any]:
        found: dict[str, Any] = {"ref": self.ref, "source": self.source, "name": self.name, "description": self.description,
                 "outcomes": list(self.outcomes), "contract_hash": self.contract_hash, "origin": self.origin}
        if schemas:
            found["input_schema"] = self.input_schema
            found["output_schema"] = self.output_schema
        if self.defaults:
            found["defaults"] = self.defaults
        if self.annotations:
            found["annotations"] = dict(self.annotations)
        return found


@dataclass(frozen=True)
class Capabilities:
    capabilities: list[CapabilityInfo]
    notes: list[str] = field(default_factory=list)            # e.g. an MCP source read from the lock only
    diagnostics: list[Diagnostic] = field(default_factory=list)  # why a declared source is missing

    @property
    def ok(self) -> bool:
        return _no_errors(self.diagnostics)


@dataclass(frozen=True)
class CallOutcome:
    """A capability called on its own: its outcome and output, checked against its contract."""

    outcome: str
    output: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "output": self.output}


@dataclass(frozen=True)
class CopyReport:
    """What `Project.copy_runs` did: run ids by fate. `to` names the target without its password."""

    to: str
    copied: list[str]
    present: list[str]   # the target held them already: untouched
    busy: list[str]      # a live process drives them: not copied (copy again once it stops)

    def to_dict(self) -> dict[str, Any]:
        return {"to": self.to, "copied": self.copied, "already_present": self.present, "busy": self.busy}
