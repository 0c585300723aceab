"""Cron arithmetic for deployment schedules: when an entry's times fall, in UTC.

The cron library (`cronsim`) reads the expression and walks its times in the entry's
time zone; this module adds only what it lacks: the `@hourly`-style aliases, the
duration of a `window`, and the UTC text a slot is stored under. Daylight saving is
cronsim's, as Debian's cron does it: a time that falls in a spring-forward gap runs at
the first minute after the gap; a time of a fixed hour in a fall-back repeat runs once
(its first occurrence); a time whose hour is a wildcard or a step (`*/30 * * * *`) runs
in both occurrences, each a slot of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

ALIASES = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: How many consecutive times `period` compares (enough to meet every gap of a weekly or
#: monthly pattern; a yearly one is found at the first pair).
_PERIOD_SAMPLE = 64
#: Where `period` starts counting: a fixed moment, so validate says the same every day.
_PERIOD_FROM = datetime(2001, 1, 1, tzinfo=UTC)


def five_fields(expr: str) -> str:
    """The expression with an alias spelled out."""
    text = " ".join(expr.split())
    return ALIASES.get(text, text)


def problem(expr: str) -> str | None:
    """What is wrong with a cron expression (cronsim's word, e.g. "Bad day-of-month" for
    `0 0 31 2 *`), or None when it names times that exist."""
    text = five_fields(expr)
    if len(text.split()) != 5:
        return "a cron expression has five fields (minute hour day-of-month month day-of-week) or is an alias"
    try:
        next(CronSim(text, _PERIOD_FROM))
    except CronSimError as exc:
        return str(exc)
    except StopIteration:
        return "it names no time that exists"
    return None


def zone(name: str) -> ZoneInfo | None:
    """The IANA time zone `name`, or None when there is none of that name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def duration(text: str) -> timedelta:
    """`90s`, `15m`, `6h`, `2d` (the model's `DURATION_PATTERN`) as a timedelta."""
    return timedelta(seconds=int(text[:-1]) * _UNITS[text[-1]])


def period(expr: str) -> timedelta:
    """The shortest interval between two consecutive times, read on the wall clock (a
    daylight-saving jump does not shorten it)."""
    times = CronSim(five_fields(expr), _PERIOD_FROM)
    previous = next(times)
    shortest: timedelta | None = None
    for _ in range(_PERIOD_SAMPLE):
        try:
            current = next(times)
        except StopIteration:
            break
        gap = current - previous
        shortest = gap if shortest is None else min(shortest, gap)
        previous = current
    return shortest or timedelta(days=366)


def times_after(expr: str, tz: ZoneInfo, after: datetime) -> Iterator[datetime]:
    """The entry's times strictly after `after`, in order, as UTC datetimes."""
    for moment in CronSim(five_fields(expr), after.astimezone(tz)):
        yield moment.astimezone(UTC)


def times_between(expr: str, tz: ZoneInfo, after: datetime, until: datetime) -> list[datetime]:
    """The entry's times in (`after`, `until`], in order, as UTC datetimes."""
    found = []
    for moment in times_after(expr, tz, after):
        if moment > until:
            break
        found.append(moment)
    return found


def utc_text(moment: datetime) -> str:
    """How a slot's time is stored and shown: `2026-12-01T10:05:00Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_moment(text: str) -> datetime | None:
    """An ISO 8601 time with an offset or `Z` (`2026-12-01T10:05:00Z`), or None when `text`
    is not one (a time without an offset is ambiguous: refused)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC)
