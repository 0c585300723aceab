"""`wfops graph WORKFLOW [--format mermaid|dot]`: draw a workflow's steps and routes."""

from __future__ import annotations

from wfops.api import Project
from wfops.cli.output import say
from wfops.errors import UsageError


def run(*, workflow: str, format: str = "mermaid", project: str | None = None) -> int:
    if format not in ("mermaid", "dot"):  # a usage error before the project is even looked for
        raise UsageError(f"unknown graph format {format!r}", hint="use --format mermaid or --format dot")
    say(Project(project).graph(workflow, format).rstrip("\n"))
    return 0
