"""`wfops compile [--out DIR]`: validate, snapshot contracts, write wfops.lock."""

from __future__ import annotations

import sys

from wfops.api import Project
from wfops.cli.output import check_format, print_json, say, warn
from wfops.cli.progress import waiting
from wfops.report import render


def run(*, out: str | None, format: str, project: str | None) -> int:
    check_format(format)
    found = Project(project)
    with waiting("the checks and the MCP servers the workflows call (their tools are snapshotted)"):
        report = found.compile(out)
    if not report.written:
        render(report.diagnostics, format, sys.stdout, found.root)
        warn("wfops compile: not written: fix the errors above first")
        return 1
    if format == "json":
        print_json({"ok": True, "lock": report.lock, "changed": report.changed, "changes": report.changes,
                    "workflows": report.workflows, "artifacts": report.artifacts,
                    "diagnostics": [d.to_dict() for d in report.diagnostics]})
        return 0
    if report.diagnostics:
        render(report.diagnostics, format, sys.stdout, found.root)
    tell = say if format == "text" else warn
    tell(f"wrote {report.lock}: {_count(len(report.workflows), 'workflow')}, "
         f"{_count(len(report.deployments), 'deployment')}, {_count(report.contracts, 'capability contract')}")
    for line in report.changes or ["unchanged"]:
        tell(f"  {line}")
    for path in report.artifacts:
        tell(f"  artifact {path}")
    return 0


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
