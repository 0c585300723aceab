"""Schedules without a daemon: which runs are due at a moment, and starting each once.

`tick` is what an outside scheduler (cron, a systemd timer, a Kubernetes CronJob, a CI
cron trigger) calls every minute. Each due slot (deployment, schedule entry, time) is
claimed by the store in the transaction that creates its run (`Store.begin_run(slot=)`),
so any number of ticks racing on one store start it once; a tick that loses the race
reads `SlotTaken` and reports the slot as started elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from wfops import cron
from wfops.errors import RefusedError, UsageError
from wfops.loader.project import load_project
from wfops.runner import RunOptions, run_deployment
from wfops.store import open_store
from wfops.store.protocol import Slot, SlotTaken, Store

__all__ = ["ScheduleInfo", "SlotTime", "TickItem", "TickReport", "parse_at"]

#: Why a due slot started nothing.
Reason = Literal["already-started", "overlap", "missed", "disabled", "refused"]
_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class SlotTime:
    """One time of an entry, in UTC and in the entry's own time zone."""

    utc: str
    local: str

    def to_dict(self) -> dict[str, str]:
        return {"utc": self.utc, "local": self.local}


@dataclass(frozen=True)
class ScheduleInfo:
    """One schedule entry of a deployment: its policies, its next times and its last run."""

    deployment: str
    entry: str
    cron: str
    timezone: str
    enabled: bool
    overlap: str
    missed: str
    window: str
    next: list[SlotTime]
    last_slot: str | None = None
    last_run: str | None = None
    last_status: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"deployment": self.deployment, "entry": self.entry, "cron": self.cron, "timezone": self.timezone,
                "enabled": self.enabled, "overlap": self.overlap, "missed": self.missed, "window": self.window,
                "next": [t.to_dict() for t in self.next],
                "last": None if self.last_slot is None else
                {"slot": self.last_slot, "run_id": self.last_run, "status": self.last_status}}


@dataclass(frozen=True)
class TickItem:
    """A due slot and what the tick did with it: started a run, or why not."""

    deployment: str
    entry: str
    slot: str
    run_id: str | None = None
    status: str | None = None       # the started run's status when the tick returned
    reason: Reason | None = None    # why a skipped slot started nothing
    detail: str | None = None       # the reason in words

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"deployment": self.deployment, "entry": self.entry, "slot": self.slot,
                                 "run_id": self.run_id}
        if self.reason is None:
            found["status"] = self.status
        else:
            found.update(reason=self.reason, detail=self.detail)
        return found


@dataclass
class TickReport:
    """What one tick started (`would_start` with `dry_run`) and what it skipped, and why."""

    at: str
    dry_run: bool = False
    started: list[TickItem] = field(default_factory=list)
    skipped: list[TickItem] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return any(item.reason == "refused" for item in self.skipped)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "dry_run": self.dry_run,
                "would_start" if self.dry_run else "started": [i.to_dict() for i in self.started],
                "skipped": [i.to_dict() for i in self.skipped]}


def parse_at(text: str | None) -> datetime:
    """`--at`: an ISO 8601 time with an offset or `Z`; None is now."""
    if text is None:
        return datetime.now(UTC)
    moment = cron.parse_moment(text)
    if moment is None:
        raise UsageError(f"--at {text[:60]!r} is not an ISO 8601 time with an offset",
                         hint="write e.g. 2026-12-01T10:05:00Z or 2026-12-01T11:05:00+01:00")
    return moment


@dataclass(frozen=True)
class _Entry:
    deployment: str
    model: Any  # wfops.model.objects.ScheduleEntry
    tz: Any     # ZoneInfo

    @property
    def key(self) -> str:
        return str(self.model.key)

    @property
    def window(self) -> timedelta:
        return cron.duration(self.model.window) if self.model.window else cron.period(self.model.cron)


def _entries(root: Path, deployment: str | None = None) -> Iterator[_Entry]:
    """Every schedule entry of the project's valid deployments (an entry validate rejects, a
    bad cron or time zone, is left out: `wfops validate` reports it)."""
    project = load_project(root)
    if deployment is not None and deployment not in project.deployments:
        raise UsageError(f"unknown deployment {deployment!r}",
                         hint="deployments: " + (", ".join(sorted(project.deployments)) or "none"))
    for name in sorted(project.deployments):
        if deployment is not None and name != deployment:
            continue
        for entry in project.deployments[name].model.schedule:
            tz = cron.zone(entry.timezone)
            if tz is not None and cron.problem(entry.cron) is None:
                yield _Entry(name, entry, tz)


def schedules(root: Path, db: Path | str, *, deployment: str | None = None, count: int = 3,
              at: datetime | None = None, store_exists: bool = True) -> list[ScheduleInfo]:
    """Each schedule entry with its next `count` times after `at` (default now) and its last run."""
    if count < 0:
        raise UsageError(f"--count {count}: give a number of times from 0")
    moment = at or datetime.now(UTC)
    entries = list(_entries(root, deployment))
    store = open_store(db) if entries and store_exists else None
    try:
        return [_info(entry, moment, count, store) for entry in entries]
    finally:
        if store is not None:
            store.close()


def _info(entry: _Entry, moment: datetime, count: int, store: Store | None) -> ScheduleInfo:
    times: list[SlotTime] = []
    for when in cron.times_after(entry.model.cron, entry.tz, moment):
        if len(times) >= count:
            break
        times.append(SlotTime(cron.utc_text(when), when.astimezone(entry.tz).isoformat()))
    last = store.slots(entry.deployment, entry=entry.key, limit=1) if store is not None else []
    model = entry.model
    return ScheduleInfo(entry.deployment, entry.key, model.cron, model.timezone, model.enabled, model.overlap,
                        model.missed, model.window or _words(entry.window), times,
                        last_slot=last[0].slot.slot if last else None, last_run=last[0].run_id if last else None,
                        last_status=last[0].status if last else None)


def _words(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


async def tick(root: Path, db: Path | str, at: datetime, *, dry_run: bool = False,
               cancel: Callable[[str], Any]) -> TickReport:
    """Start every run due at `at` whose slot no run has claimed; see the module's text.
    Runs are started one after another, each driven to its end, failure or interrupt."""
    report = TickReport(cron.utc_text(at), dry_run=dry_run)
    entries = list(_entries(root))
    if not entries:
        return report
    store = open_store(db)
    try:
        for entry in entries:
            await _tick_entry(root, db, store, entry, at, report, cancel)
    finally:
        store.close()
    return report


async def _tick_entry(root: Path, db: Path | str, store: Store, entry: _Entry, at: datetime,
                      report: TickReport, cancel: Callable[[str], Any]) -> None:
    model = entry.model
    due = [cron.utc_text(t) for t in cron.times_between(model.cron, entry.tz, at - entry.window, at)]
    if not due:
        return
    claimed = {s.slot.slot: s.run_id for s in store.slots(entry.deployment, entry=entry.key, since=due[0])}

    def skip(slot: str, reason: Reason, detail: str, run_id: str | None = None) -> None:
        report.skipped.append(TickItem(entry.deployment, entry.key, slot, run_id=run_id, reason=reason,
                                       detail=detail))

    for slot in due:
        if slot in claimed:
            skip(slot, "already-started", f"run {claimed[slot]} was started for this slot", claimed[slot])
    open_slots = [slot for slot in due if slot not in claimed]
    if not model.enabled:
        for slot in open_slots:
            skip(slot, "disabled", "the schedule entry has `enabled: false`")
        return
    chosen = [slot for slot in _chosen(model.missed, due, at) if slot not in claimed]
    for slot in open_slots:
        if slot not in chosen:
            skip(slot, "missed", f"`missed: {model.missed}` starts no run for a time passed without a tick")
    for slot in chosen:
        await _start(root, db, store, entry, slot, report, skip, cancel)


def _chosen(missed: str, due: list[str], at: datetime) -> list[str]:
    """The due slots (in order) a tick may start: each (`all`), the newest (`latest`: an older
    one is not started even when the newest was), or one of the tick's own minute (`none`)."""
    if missed == "all":
        return due
    if missed == "latest":
        return due[-1:]
    this_minute = cron.utc_text(at.replace(second=0, microsecond=0))
    return [slot for slot in due if slot >= this_minute]


async def _start(root: Path, db: Path | str, store: Store, entry: _Entry, slot: str, report: TickReport,
                 skip: Callable[..., None], cancel: Callable[[str], Any]) -> None:
    model = entry.model
    going = [s for s in store.slots(entry.deployment, unfinished=True) if s.status is not None]
    if going and model.overlap == "skip":
        skip(slot, "overlap", f"run {going[0].run_id} of an earlier slot is still {going[0].status} "
             "(`overlap: skip`)", going[0].run_id)
        return
    if report.dry_run:
        report.started.append(TickItem(entry.deployment, entry.key, slot))
        return
    if going and model.overlap == "cancel_previous":
        for previous in going:
            cancel(previous.run_id)
    options = RunOptions(entry.deployment, input=dict(model.input), project=root, db=db,
                         slot=Slot(entry.deployment, entry.key, slot))
    try:
        result = await run_deployment(options)
    except SlotTaken:
        skip(slot, "already-started", "another tick started this slot first")
        return
    except RefusedError as exc:
        skip(slot, "refused", exc.message)
        return
    snapshot = result.snapshot
    report.started.append(TickItem(entry.deployment, entry.key, slot, run_id=snapshot.run_id,
                                   status=snapshot.status))
