"""Shell completion of the names a command takes: deployments, workflows, capabilities and
recent run ids (with `last` and `last:DEPLOYMENT`). Called by typer's completion only, in
the project of the current directory; a completion never fails, it offers nothing."""

from __future__ import annotations

from collections.abc import Callable

from wfops.api import Project

RECENT_RUNS = 20


def _offered(names: Callable[[], list[str]], incomplete: str) -> list[str]:
    try:
        found = names()
    except Exception:  # noqa: BLE001 - outside a project, a broken file: complete nothing
        return []
    return [name for name in found if name.startswith(incomplete)]


def deployments(incomplete: str) -> list[str]:
    return _offered(lambda: Project().deployments(), incomplete)


def workflows(incomplete: str) -> list[str]:
    return _offered(lambda: sorted(w.name for w in Project().list_project().workflows), incomplete)


def capabilities(incomplete: str) -> list[str]:
    return _offered(lambda: sorted(c.ref for c in Project().capabilities().capabilities), incomplete)


def runs(incomplete: str) -> list[str]:
    def names() -> list[str]:
        project = Project()
        recent = [r.run_id for r in project.runs(limit=RECENT_RUNS)]
        return ["last", *(f"last:{d}" for d in project.deployments()), *recent]

    return _offered(names, incomplete)
