"""`wfops check [--live]`: recompile in memory and compare with wfops.lock (pre-commit, CI)."""

from __future__ import annotations

import sys
from typing import Any

from wfops.api import Project
from wfops.cli.output import check_format, say
from wfops.report import render


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
    render(report.diagnostics, format, sys.stdout, found.root)
    if format == "text" and report.verified:
        say(verified_line(report.verified, live))
    return 0 if report.ok else 1


def verified_line(verified: dict[str, Any], live: bool) -> str:
    """`checked 3 workflows, 2 deployments and 5 capability contracts against wfops.lock; ...`"""
    counts = (f"checked {_n(verified['workflows'], 'workflow')}, {_n(verified['deployments'], 'deployment')} "
              f"and {_n(verified['contracts'], 'capability contract')} against wfops.lock")
    servers = verified.get("mcp_servers_contacted") or []
    if servers:
        return f"{counts}; MCP servers contacted: {', '.join(servers)}"
    if live:
        return f"{counts}; no workflow calls an MCP server, none contacted"
    return f"{counts}; no MCP server contacted (their contracts as wfops.lock holds them; --live asks the servers)"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
