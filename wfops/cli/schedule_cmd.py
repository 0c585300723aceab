"""`wfops schedule tick|list|next`: the deployments' schedules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wfops.api import Project
from wfops.cli.output import print_json, say

if TYPE_CHECKING:
    from wfops.api import ScheduleInfo, TickReport

#: `tick`'s exit status when a due run was refused (its gate: validation, lock, drift), as `run`'s.
REFUSED = 2


def run(*, action: str, project: str | None, db: str | None, json_out: bool = False, at: str | None = None,
        dry_run: bool = False, count: int = 3, deployment: str | None = None) -> int:
    found = Project(project, db=db)
    if action == "tick":
        return _tick(found.tick(at=at, dry_run=dry_run), json_out)
    entries = found.schedules(deployment, count=count, at=at)
    if json_out:
        print_json([entry.to_dict() for entry in entries])
        return 0
    if not entries:
        say(f"deployment {deployment} has no schedule" if deployment else "no deployment has a schedule")
        return 0
    for entry in entries:
        _entry(entry, with_last=action == "list")
    return 0


def _tick(report: TickReport, json_out: bool) -> int:
    if json_out:
        print_json(report.to_dict())
    else:
        verb = "would start" if report.dry_run else "started"
        for item in report.started:
            run_part = f": run {item.run_id} {item.status}" if item.run_id else ""
            say(f"{verb} {item.deployment} slot {item.slot} ({item.entry}){run_part}")
        for item in report.skipped:
            say(f"skipped {item.deployment} slot {item.slot} ({item.entry}): {item.reason}: {item.detail}")
        if not report.started and not report.skipped:
            say(f"nothing due at {report.at}")
    return REFUSED if report.refused else 0


def _entry(entry: ScheduleInfo, *, with_last: bool) -> None:
    state = "" if entry.enabled else " (disabled)"
    say(f"{entry.deployment}  {entry.entry}{state}  overlap={entry.overlap} missed={entry.missed} "
        f"window={entry.window}")
    for when in entry.next:
        say(f"  next  {when.local}  ({when.utc})")
    if with_last:
        if entry.last_slot is None:
            say("  last  none yet")
        else:
            say(f"  last  {entry.last_slot}: run {entry.last_run} {entry.last_status or 'removed'}")
