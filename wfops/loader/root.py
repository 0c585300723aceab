"""Which directory is the project: the one rule, apart from the loader so that a validate
cache hit finds its project without loading the loader."""

from __future__ import annotations

from pathlib import Path

from wfops.errors import ProjectNotFound

SOURCES_FILE = "sources.yaml"
LOCK_FILE = "wfops.lock"
WORKFLOWS_DIR = "workflows"
DEPLOYMENTS_DIR = "deployments"


def find_root(start: Path | None = None, explicit: Path | str | None = None) -> Path:
    """The nearest directory upward holding sources.yaml or wfops.lock; `explicit` (--project) wins."""
    if explicit is not None:
        # deferred: the path guard is off the validate cache-hit path (which names no --project)
        from wfops.loader.guard import looked_up

        root = looked_up(explicit, what="--project").resolve()
        if not root.is_dir():
            what = "not a directory" if root.exists() else "no such directory"
            raise ProjectNotFound(f"--project {explicit}: {what}", hint="give the directory that holds sources.yaml")
        # A wrong directory would otherwise validate as an empty project: "ok" for nothing checked.
        if not any((root / marker).exists() for marker in (SOURCES_FILE, LOCK_FILE, WORKFLOWS_DIR, DEPLOYMENTS_DIR)):
            raise ProjectNotFound(f"--project {explicit}: not a wfops project (no {SOURCES_FILE}, {LOCK_FILE}, "
                                  "workflows/ or deployments/ in it)",
                                  hint="give the project's root directory, or run `wfops init` there")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / SOURCES_FILE).is_file() or (candidate / LOCK_FILE).is_file():
            return candidate
    raise ProjectNotFound(
        f"no wfops project here: no {SOURCES_FILE} or {LOCK_FILE} in {here} or above",
        hint="run `wfops init` to create one, or pass --project DIR")
