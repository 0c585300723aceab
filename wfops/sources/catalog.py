"""The capability catalog as `wfops caps` shows it: what each source offers, and from where.

std and python sources are always read live (importing a python source is all it
takes). MCP servers are started only when the user names them (`--source ID`, a
`caps show`/`caps call` of one of their capabilities); otherwise their contracts
come from `wfops.lock`, marked as such, exactly as `validate` and `check` see them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wfops.diagnostics import Diagnostic
from wfops.errors import WfopsError
from wfops.sources.base import Capability, Source, list_capabilities

Origin = Literal["live", "lock", "unknown"]


@dataclass(frozen=True, slots=True)
class Entry:
    capability: Capability
    origin: Origin

    def to_dict(self, *, schemas: bool = False) -> dict[str, Any]:
        cap = self.capability
        found: dict[str, Any] = {"ref": cap.ref, "source": cap.source, "name": cap.name,
                                 "description": cap.description, "outcomes": list(cap.outcomes),
                                 "contract_hash": cap.contract_hash, "origin": self.origin}
        if schemas:
            found["input_schema"] = cap.input_schema
            found["output_schema"] = cap.output_schema
        return found


@dataclass
class Catalog:
    root: Path
    sources: dict[str, Source]
    diagnostics: list[Diagnostic]

    def is_mcp(self, source_id: str) -> bool:
        return type(self.sources[source_id]).__name__ == "McpClientSource"

    def require(self, source_id: str) -> Source:
        source = self.sources.get(source_id)
        if source is None:
            if any(d.is_error and d.message.startswith(f"source {source_id!r}:") for d in self.diagnostics):
                raise WfopsError(f"source {source_id!r} is declared but could not be loaded (the error above "
                                 "says why)", hint="fix it; `wfops validate` reports it at sources.yaml")
            known = ", ".join(sorted(self.sources))
            raise WfopsError(f"unknown source {source_id!r}", hint=f"sources of this project: {known}")
        return source

    def entries(self, source_id: str | None = None) -> tuple[list[Entry], list[str]]:
        """Catalog entries (one source, or all), plus notes about MCP sources read from nowhere."""
        ids = [source_id] if source_id else sorted(self.sources, key=lambda s: (s != "std", s))
        found: list[Entry] = []
        notes: list[str] = []
        for sid in ids:
            source = self.require(sid)
            if not self.is_mcp(sid):
                found += [Entry(cap, "live") for _, cap in sorted(source.capabilities().items())]
            elif source_id:
                found += [Entry(cap, "live") for _, cap in sorted(open_live(source).items())]
            else:
                locked = self.locked(sid)
                # The lock snapshots only the tools workflows use (SPEC §6): say so, or the
                # list looks complete and `wfops compile` looks like the way to fill it.
                if locked is None:
                    notes.append(f"{sid}: MCP source not in wfops.lock (no workflow uses it yet); "
                                 f"`wfops caps list --source {sid}` starts it and lists every tool")
                else:
                    notes.append(f"{sid}: only the tools workflows use, as wfops.lock holds them; "
                                 f"`wfops caps list --source {sid}` starts it and lists every tool")
                found += [Entry(cap, "lock") for _, cap in sorted((locked or {}).items())]
        return found, notes

    def locked(self, source_id: str) -> dict[str, Capability] | None:
        from wfops.lock.lockfile import read_lock

        lock = read_lock(self.root)
        table = ((lock or {}).get("sources") or {}).get(source_id)
        if not table:
            return None
        return {name: Capability(source_id, name, c.get("input_schema") or {}, c.get("output_schema") or {},
                                 tuple(c.get("outcomes") or ("ok",)), c.get("description") or "")
                for name, c in (table.get("capabilities") or {}).items()}

    def capability(self, ref: str) -> tuple[Source, Capability]:
        """Resolve a concrete `source.capability` ref (MCP sources are NOT opened here)."""
        source_id, dot, name = ref.partition(".")
        if not dot or not name:
            raise WfopsError(f"{ref!r} is not a capability ref", hint="write `<source>.<capability>`, e.g. std.echo")
        source = self.require(source_id)
        caps = open_live(source) if self.is_mcp(source_id) else source.capabilities()
        cap = caps.get(name)
        if cap is None:
            raise WfopsError(f"source {source_id!r} has no capability {name!r}",
                             hint=f"`wfops caps list --source {source_id}` lists them")
        return source, cap


def load_catalog(root: Path) -> Catalog:
    from wfops.loader.project import load_project
    from wfops.sources.registry import build_sources

    project = load_project(root)
    sources, diagnostics = build_sources(project)
    return Catalog(project.root, sources, [*project.diagnostics, *diagnostics])


def open_live(source: Source) -> dict[str, Capability]:
    """Start a source, read its capabilities, stop it (all in one event loop)."""
    return asyncio.run(list_capabilities(source))
