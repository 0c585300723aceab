"""`wfops check [--live]`: recompile in memory and compare with wfops.lock (pre-commit, CI)."""

from __future__ import annotations

import sys


def run(*, live: bool, format: str, project: str | None) -> int:
    from wfops.loader.project import find_root
    from wfops.lock.check import check_project
    from wfops.report import FORMATS, render

    if format not in FORMATS:
        from wfops.errors import UsageError

        raise UsageError(f"unknown format {format!r}", hint="use one of: " + ", ".join(FORMATS))
    root = find_root(explicit=project)
    diagnostics = check_project(root, live=live)
    render(diagnostics, format, sys.stdout, root)
    return 1 if any(d.is_error for d in diagnostics) else 0
