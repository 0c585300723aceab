"""`wfops check [--live]`: recompile in memory and compare with wfops.lock (pre-commit, CI)."""

from __future__ import annotations

import sys

from wfops.api import Project
from wfops.api.check import rendered
from wfops.cli.output import check_format


def run(*, live: bool, format: str, project: str | None) -> int:
    check_format(format)
    found = Project(project)
    if live:
        # deferred: the progress display (and rich on a terminal); a plain `check` is a hot path
        from wfops.cli.progress import waiting

        with waiting("the MCP servers the workflows call (their tools are compared with wfops.lock)"):
            report = found.check(live=True)
    else:
        report = found.check(live=False)
    sys.stdout.write(rendered(report, format, live=live, root=found.root))
    return 0 if report.ok else 1
