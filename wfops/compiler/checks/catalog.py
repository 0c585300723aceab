"""The capability catalog validation checks against.

std and python sources are read live (importing a python source is the only
user code validation runs). MCP contracts come from `wfops.lock`; only with
`live` are the servers started and listed.
"""

from __future__ import annotations

from collections.abc import Mapping

from wfops.compiler.checks.caching import check_tool_caches
from wfops.compiler.checks.context import IDENTITY, Catalog
from wfops.compiler.checks.envs import environments
from wfops.diagnostics import Diagnostic, error
from wfops.errors import WfopsError
from wfops.loader.project import LOCK_FILE, Project
from wfops.model.kinds import walk_steps
from wfops.redact import mask
from wfops.sources.base import Source, list_capabilities


def build_catalog(project: Project, sources: Mapping[str, Source], *, live: bool = False
                  ) -> tuple[Catalog, list[Diagnostic]]:
    catalog = Catalog()
    diagnostics: list[Diagnostic] = []
    catalog.sources_known = "sources.yaml" not in project.broken_files
    declared = dict(project.sources.model.sources) if project.sources is not None else {}
    mcp_ids = [sid for sid, source in sources.items() if source.kind == "mcp"]
    for source_id, source in sources.items():
        catalog.kinds[source_id] = source.kind
        if source.kind != "mcp":  # MCP contracts: live (`--live`, compile) or from the lock, below
            catalog.caps[source_id] = dict(source.capabilities())
    catalog.broken = {sid for sid in declared if sid not in sources}
    if not mcp_ids:
        return catalog, diagnostics
    if live:
        # Only servers some workflow calls are started: a declared but unused server (not
        # running, say) must not block `compile`; the lock records used contracts only.
        used = used_sources(project)
        for sid in mcp_ids:
            if sid not in used:
                catalog.caps[sid] = {}
        diagnostics += _list_live(project, {sid: sources[sid] for sid in mcp_ids if sid in used}, catalog)
        diagnostics += check_tool_caches(project, catalog, {sid for sid in mcp_ids if sid in used})
    else:
        diagnostics += _from_lock(project, mcp_ids, catalog)
    return catalog, diagnostics


def used_sources(project: Project) -> set[str]:
    """Concrete source ids some `uses:` reaches, under each deployment's bindings and identity."""
    used: set[str] = set()
    for name, envs in environments(project).items():
        logical = {str(getattr(step, "uses", None)).partition(".")[0]
                   for _at, step in walk_steps(project.workflows[name].model.steps)
                   if isinstance(getattr(step, "uses", None), str)}
        for env in [*envs, IDENTITY]:
            used.update(env.concrete(source) for source in logical)
    return used


def _from_lock(project: Project, mcp_ids: list[str], catalog: Catalog) -> list[Diagnostic]:
    # deferred: the lock's reader (five dataclasses, ~5 ms at start-up) only for MCP sources
    from wfops.lockfile import read_lock

    try:
        lock = read_lock(project.root)
    except WfopsError as exc:
        catalog.lock_backed.update(mcp_ids)
        return [error("corrupt-lock", exc.message, LOCK_FILE, hint=exc.hint)]
    for sid in mcp_ids:
        catalog.lock_backed.add(sid)
        contracts = (lock.source_capabilities(sid) if lock is not None else None) or {}
        catalog.caps[sid] = {name: contract.as_capability(sid, name) for name, contract in contracts.items()}
    return []


def _list_live(project: Project, mcp: dict[str, Source], catalog: Catalog) -> list[Diagnostic]:
    """Start each MCP server, list its tools, stop it. A server that fails is a finding."""
    import asyncio  # deferred: asyncio (~33 ms), only `compile` and `check --live` list servers

    async def one(sid: str, source: Source) -> Diagnostic | None:
        try:
            catalog.caps[sid] = await list_capabilities(source)
        except Exception as exc:  # a broken server is a finding, never a crash
            catalog.broken.add(sid)
            message = mask(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")  # it quotes the server
            loaded = project.sources
            at = loaded.doc.at(("sources", sid)) if loaded is not None else (1, 1)
            return error("source-unavailable", f"MCP source {sid!r} could not be listed: {message}",
                         loaded.file if loaded is not None else "sources.yaml", at, source=sid,
                         hint="check its `command`/`url`; run the server by hand to see its error")
        return None

    async def all_sources() -> list[Diagnostic | None]:
        return list(await asyncio.gather(*(one(sid, src) for sid, src in mcp.items())))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        listed = asyncio.run(all_sources())
    else:  # called from async code (the MCP server): list in a thread with its own loop
        # deferred: concurrent.futures (~9 ms), only when called from async code
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            listed = pool.submit(asyncio.run, all_sources()).result()
    return [d for d in listed if d is not None]
