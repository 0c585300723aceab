"""`wfops check [--live]`: recompile in memory and compare with wfops.lock (pre-commit, CI)."""

from __future__ import annotations

import sys

from wfops.api import Project
from wfops.cli.output import check_format
from wfops.report import render


def run(*, live: bool, format: str, project: str | None) -> int:
    check_format(format)
    found = Project(project)
    report = found.check(live=live)
    render(report.diagnostics, format, sys.stdout, found.root)
    return 0 if report.ok else 1
