"""Validate a whole project: load, import python sources, run every static check.

The rest of wfops (compile, check, run, watch, mcp) calls `validate_project`.
Checks that depend on bindings run once per environment (see checks/envs.py);
a finding that only some deployments produce names them.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wfops.compiler.checks.catalog import build_catalog
from wfops.compiler.checks.context import CheckContext
from wfops.compiler.checks.run import run_checks
from wfops.diagnostics import Diagnostic, sort_key
from wfops.loader.project import Project, load_project
from wfops.sources.base import Capability, Source
from wfops.sources.recorded import ContractRecord
from wfops.sources.registry import build_sources


class Validation:
    # A plain class, not a dataclass: creating one costs ~1 ms at import (`validate` starts cold).
    def __init__(self, project: Project, sources: dict[str, Source], catalog: dict[str, dict[str, Capability]],
                 diagnostics: list[Diagnostic]) -> None:
        self.project = project
        self.sources = sources          # concrete source id -> source (MCP ones not started)
        self.catalog = catalog          # concrete source id -> capability name -> contract
        self.diagnostics = diagnostics

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def validate_project(root: Path, *, live: bool = False, contracts: ContractRecord | None = None) -> Validation:
    """Load and check everything under `root`.

    MCP contracts come from wfops.lock unless `live` (then the servers are listed).
    A capability of an MCP source the lock does not hold is `contract-unknown`
    (a warning here; `check` makes it an error).
    `contracts` (`wfops validate` only): python sources may be served from the contracts the
    last validate recorded there, unimported (`wfops.fastpath.contracts`).
    """
    with _collection_paused():
        return validate_loaded(load_project(Path(root)), live=live, contracts=contracts)


def validate_loaded(project: Project, *, live: bool = False, contracts: ContractRecord | None = None) -> Validation:
    """The same checks on an already loaded project (e.g. one with an inline file substituted)."""
    with _collection_paused():
        sources, source_diagnostics = build_sources(project, cached=contracts)
        catalog, catalog_diagnostics = build_catalog(project, sources, live=live)
        ctx = CheckContext(project, catalog)
        found = [*project.diagnostics, *source_diagnostics, *catalog_diagnostics, *run_checks(ctx)]
        return Validation(project, sources, catalog.caps, sorted(dict.fromkeys(found), key=sort_key))


class _Pause:
    """How many validations are running (in any thread), and whether collection was on before
    the first of them."""

    running = 0
    was_enabled = False
    lock = threading.Lock()


@contextmanager
def _collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a project is loaded and checked. The loaded project is
    a large tree of long-lived, acyclic data: every full collection walked all of it again and
    found nothing (4% of a cold validate's CPU at 300 files, 10-15% at 3,000); what a validation
    throws away is freed by reference counts as before (the same peak memory at 3,000 files).
    Collection is on again when the last validation running in the process ends, if it was on."""
    with _Pause.lock:
        if _Pause.running == 0:
            _Pause.was_enabled = gc.isenabled()
            gc.disable()
        _Pause.running += 1
    try:
        yield
    finally:
        with _Pause.lock:
            _Pause.running -= 1
            if _Pause.running == 0 and _Pause.was_enabled:
                gc.enable()
