"""`check`: the project against wfops.lock, and the record that answers an unchanged project.

A check without `--live` depends only on the project's files, its python and the libraries
that python loads: the snapshot key (`wfops.fastpath.snapshot`). So each one stores its
report as `wfops check` prints it (`wfops.fastpath.cache.store_check`), and the entry point
prints that while the key holds (`wfops.fastpath.replay`), importing no python source.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from wfops.api.ci_schedule import stale_findings
from wfops.api.findings import Report
from wfops.fastpath import cache
from wfops.fastpath.replay import REPLAYED
from wfops.fastpath.snapshot import project_files
from wfops.lock.check import check_verified
from wfops.report import render


def check_project(root: Path, *, live: bool) -> Report:
    """The findings of `check` and what it verified; recorded for the replay unless `live`
    (the servers' answers are not in the key)."""
    files = None if live else project_files(root)  # before the check reads them: an edit meanwhile misses
    found, verified = check_verified(root, live=live)
    found += stale_findings(root)  # notes the workflow file it read, so the record misses when it changes
    report = Report(found, ["(whole project)"], verified=verified.to_dict())
    if files is not None:
        cache.store_check(root, files, {"ok": report.ok, **{fmt: rendered(report, fmt, live=False)
                                                             for fmt in REPLAYED}})
    return report


def rendered(report: Report, fmt: str, *, live: bool, root: Path | None = None) -> str:
    """The report as `wfops check --format fmt` prints it."""
    out = io.StringIO()
    render(report.diagnostics, fmt, out, root)
    if fmt == "text" and report.verified:
        out.write(verified_line(report.verified, live) + "\n")
    return out.getvalue()


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
