"""`wfops graph WORKFLOW [--format mermaid|dot]`: draw a workflow's steps and routes."""

from __future__ import annotations

from pathlib import Path

from wfops.cli.output import say
from wfops.errors import UsageError, WfopsError


def run(*, workflow: str, format: str = "mermaid", project: str | None = None) -> int:
    from wfops.loader.project import find_root, load_project
    from wfops.report.graph import FORMATS, render_graph

    if format not in FORMATS:
        raise UsageError(f"unknown graph format {format!r}", hint="use --format mermaid or --format dot")
    loaded = load_project(find_root(Path.cwd(), project))
    found = loaded.workflows.get(workflow)
    if found is None:
        broken = [f for f in loaded.broken_files if Path(f).stem == workflow]
        if broken:
            raise WfopsError(f"workflow {workflow!r} ({broken[0]}) does not load",
                             hint="run `wfops validate` to see why")
        known = ", ".join(sorted(loaded.workflows)) or "none"
        raise WfopsError(f"unknown workflow {workflow!r}", hint=f"workflows in this project: {known}")
    say(render_graph(found.model, format).rstrip("\n"))
    return 0
