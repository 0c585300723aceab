"""`wfops check [--live]`: recompile in memory and compare with wfops.lock (pre-commit, CI)."""

from __future__ import annotations

import sys

from wfops.api import Project
from wfops.api.check import rendered
from wfops.cli.output import check_format


def run(*, live: bool, format: str, project: str | None) -> int:
    check_format(format)
    found = Project(project)
    report = found.check(live=live)
    sys.stdout.write(rendered(report, format, live=live, root=found.root))
    return 0 if report.ok else 1
