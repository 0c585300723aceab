"""`wfops runs list|show|trace|prune|rm`: the run history in the store."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wfops.errors import ProjectNotFound, UnknownRunError, UsageError

STATUSES = ("running", "completed", "failed", "interrupted")


def run(*, action: str, project: str | None, db: str | None, json_out: bool = False,
        run_id: str | None = None, deployment: str | None = None, status: str | None = None,
        limit: int | None = None, from_seq: int | None = None, older_than: float | None = None) -> int:
    if status is not None and status not in STATUSES:
        raise UsageError(f"--status {status!r}: use one of {', '.join(STATUSES)}")
    path = store_path(project, db)
    if not path.exists():
        # Reading never creates a store: an empty history is simply empty.
        if action == "list":
            return _print_list([], json_out)
        if action == "prune":
            from wfops.cli.output import say

            say("pruned 0 runs")
            return 0
        raise UnknownRunError(f"no run {run_id!r}: there is no store at {path} yet")
    from wfops.store import open_store

    store = open_store(path)
    try:
        if action == "list":
            return _print_list(store.list_runs(deployment=deployment, status=status, limit=limit or 20),
                               json_out)
        if action == "show":
            record = store.get_run(str(run_id))
            return _show(record, json_out, crashed=not json_out and _crashed(store, record))
        if action == "trace":
            return _trace(store.trace(str(run_id), from_seq=from_seq, limit=limit), json_out)
        if action == "prune":
            from wfops.cli.output import say

            count = store.prune(older_than or 0.0)
            say(f"pruned {count} finished run{'s' if count != 1 else ''} older than {older_than:g} days")
            return 0
        if action == "rm":
            from wfops.cli.output import say

            store.get_run(str(run_id))  # an unknown id is exit 1, even one no lock file could be named after
            with store.run_lock(str(run_id)):  # never delete a run under a live driver
                store.delete_run(str(run_id))
            say(f"removed run {run_id}")
            return 0
        raise ValueError(f"unknown runs action {action!r}")
    finally:
        store.close()


def store_path(project: str | None, db: str | None) -> Path:
    """The store file; --db or WFOPS_DB work even outside a project."""
    from wfops.loader.project import find_root, project_db_path

    try:
        root = find_root(explicit=project)
    except ProjectNotFound:
        if db or os.environ.get("WFOPS_DB"):
            return Path(db or os.environ["WFOPS_DB"])
        raise
    return project_db_path(root, db)


def _print_list(records: list[Any], json_out: bool) -> int:
    from wfops.cli.output import print_json, say

    if json_out:
        print_json([r.snapshot.to_public() for r in records])
        return 0
    if not records:
        say("no runs yet")
        return 0
    rows = [("RUN", "DEPLOYMENT", "STATUS", "OUTCOME", "STEPS", "STARTED (UTC)")]
    for r in records:
        s = r.snapshot
        rows.append((s.run_id, s.deployment or "-", s.status, s.outcome or "-", str(r.steps),
                     r.created_at[:19].replace("T", " ")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        say("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _crashed(store: Any, record: Any) -> bool:
    """A `running` run whose lock nobody holds: its process died (or was stopped)."""
    from wfops.errors import StoreError

    if record.snapshot.status != "running":
        return False
    try:
        with store.run_lock(record.snapshot.run_id):
            return True
    except StoreError:  # busy (a live driver) or no lock directory: say nothing
        return False


def _show(record: Any, json_out: bool, *, crashed: bool = False) -> int:
    from wfops.cli.output import print_json, say

    s = record.snapshot
    if json_out:
        print_json(s.to_public())
        return 0
    say(f"run        {s.run_id}")
    say(f"deployment {s.deployment or '-'}")
    say(f"workflow   {s.workflow} (artifact {s.artifact[:19]})")
    say(f"status     {s.status}" + (f" (outcome {s.outcome})" if s.outcome else ""))
    if crashed:
        say(f"           no process is driving it; continue it with: wfops resume {s.run_id}")
    say(f"steps      {record.steps}")
    say(f"started    {record.created_at}")
    say(f"updated    {record.updated_at}")
    if s.output is not None:
        say("output     " + _compact(s.output))
    if s.error:
        say(f"error      {s.error.get('type')} at {s.error.get('step')}: {s.error.get('message')}")
    if s.interrupt:
        say(f"interrupt  {s.interrupt.kind} at {s.interrupt.step}: {_compact(s.interrupt.request)}")
        say(f"           resume: wfops resume {s.run_id} --outcome OUTCOME --payload '<json>'")
        if s.interrupt.outcomes:
            say("           where OUTCOME is one of: " + ", ".join(s.interrupt.outcomes))
    return 0


def _trace(entries: list[Any], json_out: bool) -> int:
    from wfops.cli.output import print_json, say
    from wfops.runner.progress import describe

    if json_out:
        print_json([e.to_dict() for e in entries])
        return 0
    for e in entries:
        say(describe(e).strip())
        if e.state_changes:
            say("      " + ", ".join(f"{c['path']}={_compact(c['value'], 40)}" for c in e.state_changes))
    return 0


def _compact(value: Any, width: int = 100) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[:width - 1] + "…"
