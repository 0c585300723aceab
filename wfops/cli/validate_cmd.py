"""`wfops validate [PATHS...] [--format F]`: syntax, schema and static checks.

The whole project is always checked; PATHS (relative to the current directory,
inside the project) only choose which findings are reported. Outside any project,
each path is checked on its own. Exit 0 when there are no errors, 1 when there are.
"""

from __future__ import annotations

import sys
from pathlib import Path

from wfops.api import Project, validate_files
from wfops.cli.output import check_format
from wfops.errors import ProjectNotFound
from wfops.report import render


def run(*, paths: list[str], format: str, project: str | None) -> int:
    check_format(format)
    found = _project(project, paths)
    if found is None:
        report = validate_files(paths)
        render(report.diagnostics, format, sys.stdout, None)
    else:
        report = found.validate(paths, base=Path.cwd())
        render(report.diagnostics, format, sys.stdout, found.root)
    return 0 if report.ok else 1


def _project(explicit: str | None, paths: list[str]) -> Project | None:
    """The project the paths belong to: --project, else the one around the current directory,
    else the one around the first path that has one; None when the paths are in no project."""
    if explicit is not None or not paths:
        return Project(explicit)  # no project and no paths: ProjectNotFound, exit 2
    for start in (None, *(Path(raw) for raw in paths)):
        try:
            if start is None:
                return Project()
            where = start.resolve()
            return Project.nearest(where if where.is_dir() else where.parent)
        except ProjectNotFound:
            continue
    return None
