"""The step cache's rules: a call with side effects is never served from the cache, and an
MCP tool's cache default applies only where its server says it is read-only (or you opt in)."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import Catalog, Sink
from wfops.diagnostics import Diagnostic, error, warning
from wfops.loader.project import Loaded, Project
from wfops.sources.base import Capability


def check_cache(loaded: Loaded, index: int, step: Any, cap: Capability, sink: Sink) -> None:
    declared = getattr(step, "cache", None)
    if declared is None or declared is False or not cap.destructive:
        return
    sink.error("cache-side-effects", f"step `{step.id}` caches `{step.uses}`, which its source annotates as "
               "destructive: a hit would skip the call's side effects", loaded, ("steps", index, "cache"),
               hint="remove `cache:` from the step (cache only calls whose result is all they do)")


def check_tool_caches(project: Project, catalog: Catalog, listed: set[str]) -> list[Diagnostic]:
    """sources.yaml's per-tool `cache` (under `tools:`) of the MCP sources just listed (`listed`), against what
    each server says of its tools: a destructive one is an error, one not annotated read-only
    (and not opted in with `unannotated: true`) a warning, since its default is not applied."""
    loaded = project.sources
    if loaded is None:
        return []
    found: list[Diagnostic] = []
    for sid, spec in loaded.model.sources.items():
        tools = getattr(spec, "tools", None) or {}
        for tool, entry in tools.items():
            declared = entry.cache
            cap = catalog.caps.get(sid, {}).get(tool)
            if sid not in listed or cap is None or declared is None or declared is False:
                continue
            at = loaded.doc.at(("sources", sid, "tools", tool, "cache"))
            if cap.destructive:
                found.append(error("cache-side-effects", f"`cache:` of tool `{tool}` of MCP source `{sid}`, which "
                                   "its server annotates as destructive: a hit would skip the call's side effects",
                                   loaded.file, at, source=sid, hint=f"remove `cache` from tool `{tool}` under the source's `tools:`"))
            elif cap.annotations.get("readOnlyHint") is not True and not getattr(declared, "unannotated", False):
                found.append(warning("cache-not-read-only", f"tool `{tool}` of MCP source `{sid}` is not annotated "
                                     "read-only, so its `cache:` default is not applied", loaded.file, at,
                                     source=sid, hint="write `{unannotated: true}` (with a `ttl` if you like) "
                                     "once you know its calls have no side effects"))
    return found
