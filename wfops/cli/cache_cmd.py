"""`wfops cache list|show|clear`: the step cache in the run store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wfops.api import Project
from wfops.cli.output import compact, print_json, say
from wfops.report.trace import seconds

if TYPE_CHECKING:
    from wfops.api import CacheEntry


def run(*, action: str, project: str | None, db: str | None, json_out: bool = False,
        deployment: str | None = None, older_than: str | None = None, key: str | None = None) -> int:
    found = Project(project, db=db)
    if action == "list":
        return _list(found.cache_entries(deployment=deployment, older_than=older_than), json_out)
    if action == "show":
        return _show(found.cache_entry(str(key)), json_out)
    if action == "clear":
        count = found.clear_cache(deployment=deployment, older_than=older_than)
        if json_out:
            print_json({"cleared": count})
        else:
            say(f"cleared {count} cache entr{'ies' if count != 1 else 'y'}")
        return 0
    raise ValueError(f"unknown cache action {action!r}")


def _list(entries: list[CacheEntry], json_out: bool) -> int:
    if json_out:
        print_json([e.to_dict() for e in entries])
        return 0
    if not entries:
        say("the step cache is empty")
        return 0
    rows = [("KEY", "CAPABILITY", "DEPLOYMENT", "FROM", "SAVES", "HITS", "MADE (UTC)")]
    for e in entries:
        rows.append((e.key[:12], e.capability, e.deployment or "-", f"{e.run_id} {e.step}", seconds(e.seconds),
                     str(e.hits), e.created_at[:19].replace("T", " ")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        say("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _show(e: CacheEntry, json_out: bool) -> int:
    if json_out:
        print_json({**e.to_dict(), "output": e.output})
        return 0
    say(f"key         {e.key}")
    say(f"capability  {e.capability} (contract {e.contract[:19]})")
    say(f"deployment  {e.deployment or '-'}")
    say(f"from        run {e.run_id} step {e.step} (#{e.seq})")
    say(f"outcome     {e.outcome}")
    say(f"saves       {seconds(e.seconds)} a hit ({e.hits} hit{'s' if e.hits != 1 else ''} so far)")
    say(f"made        {e.created_at}")
    say(f"last used   {e.used_at}")
    say("output      " + compact(e.output))
    return 0
