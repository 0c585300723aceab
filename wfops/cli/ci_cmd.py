"""`wfops ci schedule`: the CI files generated from the project."""

from __future__ import annotations

from wfops.api import Project
from wfops.cli.output import print_json, say


def run(*, action: str, project: str | None, json_out: bool = False) -> int:
    if action != "schedule":
        raise ValueError(f"unknown ci action {action!r}")
    written = Project(project).schedule_workflow()
    if json_out:
        print_json(written.to_dict())
    else:
        said = "wrote" if written.written else "up to date:"
        say(f"{said} {written.shown} (schedule digest {written.digest})")
    return 0
