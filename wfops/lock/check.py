"""`check` as a plain function: every validation finding plus every lock difference."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wfops.compiler.checks.catalog import used_sources
from wfops.compiler.validate import validate_project
from wfops.diagnostics import Diagnostic, error, sort_key
from wfops.errors import WfopsError
from wfops.lock.build import compile_project
from wfops.lock.drift import compare
from wfops.lockfile import LOCK_NAME, lock_path, read_lock


@dataclass(frozen=True)
class Verified:
    """What a check compared with wfops.lock (the counts come from the project as it is now)."""

    workflows: int = 0
    deployments: int = 0
    contracts: int = 0                                  # capability contracts the workflows use
    contacted: list[str] = field(default_factory=list)  # MCP sources started and listed (`live`)

    def to_dict(self) -> dict[str, Any]:
        return {"workflows": self.workflows, "deployments": self.deployments, "contracts": self.contracts,
                "mcp_servers_contacted": list(self.contacted)}


def check_project(root: Path, *, live: bool = False) -> list[Diagnostic]:
    return check_verified(root, live=live)[0]


def check_verified(root: Path, *, live: bool = False) -> tuple[list[Diagnostic], Verified]:
    """The findings of `check`, and what it verified."""
    validation = validate_project(root, live=live)
    project = validation.project
    contacted = sorted(sid for sid in used_sources(project)
                       if live and sid in validation.sources and validation.sources[sid].kind == "mcp")
    # In `check` a contract the lock does not hold is an error: CI cannot vouch for it.
    found = [d.replace(severity="error") if d.code == "contract-unknown" else d
             for d in validation.diagnostics]
    counted = Verified(len(project.workflows), len(project.deployments), contacted=contacted)
    try:
        lock = read_lock(root)
    except WfopsError as exc:
        return _unique(found + [error("corrupt-lock", exc.message, LOCK_NAME, hint=exc.hint)]), counted
    text = lock_path(root).read_text(encoding="utf-8") if lock is not None else None
    compiled = compile_project(validation)
    found += compare(validation, compiled, lock, text)
    contracts = sum(len(entry.get("capabilities", {})) for entry in compiled.sources.values())
    return _unique(found), replace(counted, contracts=contracts)


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for d in sorted(diagnostics, key=sort_key):
        key = (d.code, d.file, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            kept.append(d)
    return kept
