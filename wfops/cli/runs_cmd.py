"""`wfops runs list|show|trace|logs|prune|rm|copy`: the run history in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wfops.api import Project
from wfops.cli.output import compact, print_json, say
from wfops.report.trace import describe

if TYPE_CHECKING:
    from wfops.api import CopyReport, Run, StepLog, TraceEntry


def run(*, action: str, project: str | None, db: str | None, json_out: bool = False,
        run_id: str | None = None, deployment: str | None = None, status: str | None = None,
        since: str | None = None, limit: int | None = None, from_seq: int | None = None, older_than: float | None = None,
        to: str | None = None, force: bool = False, step: str | None = None, scheduled: bool = False) -> int:

    found = Project(project, db=db)
    if action == "list":
        return _list(found.runs(deployment=deployment, status=status, limit=limit or 20, since=since,
                                scheduled=scheduled),
                     json_out, _filters(deployment, status, since) or ("scheduled runs" if scheduled else ""))
    if action == "show":
        return _show(found.get_run(str(run_id)), json_out)
    if action == "trace":
        return _trace(found.trace(str(run_id), from_seq=from_seq, limit=limit), json_out)
    if action == "logs":
        return _logs(found.step_logs(str(run_id), step), json_out, step)
    if action == "prune":
        count = found.prune(older_than or 0.0)
        say(f"pruned {count} finished run{'s' if count != 1 else ''} older than {older_than or 0:g} days")
        return 0
    if action == "rm":
        run_id = found.resolve_run(str(run_id))
        found.remove_run(run_id, force=force)
        say(f"removed run {run_id}")
        return 0
    if action == "copy":
        return _copy(found.copy_runs(str(to)), json_out)
    raise ValueError(f"unknown runs action {action!r}")


def _copy(report: CopyReport, json_out: bool) -> int:
    if json_out:
        print_json(report.to_dict())
        return 0
    count = len(report.copied)
    say(f"copied {count} run{'s' if count != 1 else ''} to {report.to}"
        + (f" ({len(report.present)} already there)" if report.present else ""))
    if report.busy:
        say(f"skipped {len(report.busy)} run(s) a live process is driving: {', '.join(report.busy)}; "
            "copy again once they stop")
    return 0


def _filters(deployment: str | None, status: str | None, since: str | None = None) -> str:
    """`` `failed` runs of deployment `d` since 2h ``, or "" without filters."""
    if not (status or deployment or since):
        return ""
    runs = f"`{status}` runs" if status else "runs"
    return runs + (f" of deployment `{deployment}`" if deployment else "") + (f" since {since}" if since else "")


def _list(runs: list[Run], json_out: bool, filters: str) -> int:
    if json_out:
        print_json([r.to_dict() for r in runs])
        return 0
    if not runs:
        say(f"no {filters}" if filters else "no runs yet")
        return 0
    rows = [("RUN", "DEPLOYMENT", "STATUS", "OUTCOME", "STEPS", "STARTED (UTC)")]
    for r in runs:
        rows.append((r.run_id, r.deployment or "-", r.status + (" (unlocked)" if r.unlocked else "")
                     + (" (orphaned)" if r.orphaned else ""), r.outcome or "-", str(r.steps),
                     (r.created_at or "")[:19].replace("T", " ")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        say("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _show(r: Run, json_out: bool) -> int:
    if json_out:
        print_json(r.to_dict())
        return 0
    say(f"run        {r.run_id}")
    say(f"deployment {r.deployment or '-'}")
    say(f"workflow   {r.workflow} (artifact {r.artifact[:19]})")
    say(f"status     {r.status}" + (f" (outcome {r.outcome})" if r.outcome else ""))
    if r.unlocked:
        say("unlocked   it ran the working tree (--unlocked), not what wfops.lock records")
    if r.forked_from:
        say(f"forked     from run {r.forked_from.get('run_id')} before step {r.forked_from.get('step')}")
    if r.slot:
        say(f"slot       {r.slot['slot']} of schedule entry `{r.slot['entry']}`")
    if r.orphaned:
        say(f"           no process is driving it; continue it with: wfops resume {r.run_id}")
    say(f"steps      {r.steps}")
    say(f"started    {r.created_at}")
    say(f"updated    {r.updated_at}")
    if r.duration_ms is not None:
        say(f"took       {r.duration_ms / 1000:.3f} s")
    if r.details is not None:
        say("input      " + compact(r.details.input))
        say("state      " + compact(r.details.state))
    if r.output is not None:
        say("output     " + compact(r.output))
    if r.error:
        say(f"error      {r.error.get('type')} at {r.error.get('step')}: {r.error.get('message')}")
    if r.status in ("failed", "cancelled"):
        say(f"           continue it with: wfops resume {r.run_id}")
    if r.interrupt:
        say(f"interrupt  {r.interrupt.kind} at {r.interrupt.step}: {compact(r.interrupt.request)}")
        say(f"           resume: wfops resume {r.run_id} --outcome OUTCOME --payload '<json>'")
        if r.interrupt.outcomes:
            say("           where OUTCOME is one of: " + ", ".join(r.interrupt.outcomes))
    return 0


def _logs(logs: list[StepLog], json_out: bool, step: str | None) -> int:
    if json_out:
        print_json([log.to_dict() for log in logs])
        return 0
    if not logs:
        say("no step logs" + (f" for step {step}" if step else "") + ": its python nodes printed and logged "
            "nothing, its MCP tools sent no log notifications")
        return 0
    for log in logs:
        if log.seq <= 0:  # the run's own log, stored with the commit of entry -seq
            say(f"== run, up to #{-log.seq} ==")
        else:
            say(f"== #{log.seq} {log.step}" + (f" attempt {log.attempt}" if log.attempt > 1 else "") + " ==")
        say(log.text.rstrip("\n"))
    return 0


def _trace(entries: list[TraceEntry], json_out: bool) -> int:
    if json_out:
        print_json([e.to_dict() for e in entries])
        return 0
    for e in entries:
        say(describe(e).strip())
        if e.state_changes:
            say("      " + ", ".join(f"{c['path']}={compact(c['value'], 40)}" for c in e.state_changes))
        if e.extra:
            say("      extra: " + ", ".join(f"{k}={compact(v, 40)}" for k, v in e.extra.items()))
    return 0
