"""A deployment's `schedule:` names times that exist, in a time zone that exists, with a
catch-up window no shorter than the interval between its times: what validates, ticks."""

from __future__ import annotations

from datetime import timedelta

from wfops.compiler.checks.context import CheckContext
from wfops.loader.project import Loaded


def check_schedule(ctx: CheckContext, loaded: Loaded) -> None:
    if not loaded.model.schedule:
        return
    # deferred: cronsim and zoneinfo (~4 ms at start-up) only for a deployment with a schedule
    from wfops import cron

    seen: dict[str, int] = {}
    for index, entry in enumerate(loaded.model.schedule):
        at = ("schedule", index)
        if entry.key in seen:
            ctx.sink.error("duplicate-schedule", f"schedule entry {index} has the same "
                           f"{'name' if entry.name else 'cron and timezone'} as entry {seen[entry.key]} "
                           f"(`{entry.key}`): their runs would share slots", loaded, at,
                           hint="give each entry a distinct `name:`")
        seen.setdefault(entry.key, index)
        wrong = cron.problem(entry.cron)
        if wrong is not None:
            ctx.sink.error("invalid-cron", f"cron `{entry.cron}` names no time: {wrong}", loaded, (*at, "cron"),
                           hint="five fields: minute (0-59) hour (0-23) day-of-month (1-31) month (1-12) "
                                "day-of-week (0-7), on dates that exist; or @hourly, @daily, @weekly, @monthly")
        if cron.zone(entry.timezone) is None:
            ctx.sink.error("unknown-timezone", f"`{entry.timezone}` is not an IANA time zone", loaded,
                           (*at, "timezone"), hint="write a name such as UTC, Europe/Berlin or America/New_York")
        if wrong is None and entry.window is not None:
            every = cron.period(entry.cron)
            if cron.duration(entry.window) < every:
                ctx.sink.error("short-window", f"window {entry.window} is shorter than the {_human(every)} "
                               f"between two times of `{entry.cron}`", loaded, (*at, "window"),
                               hint=f"make it at least {_human(every)}, or leave `window` out (that is its default)")


def _human(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
