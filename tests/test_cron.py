"""The cron arithmetic wfops adds to cronsim: aliases, what names no time, the interval,
daylight saving as documented, and the `--at` moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from wfops import cron


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_aliases_and_impossible_expressions() -> None:
    assert cron.five_fields(" @hourly ") == "0 * * * *" and cron.five_fields("*/5  * * * *") == "*/5 * * * *"
    assert cron.problem("@weekly") is None and cron.problem("0 0 29 2 *") is None  # leap days exist
    assert cron.problem("0 0 31 2 *") == "Bad day-of-month"
    assert cron.problem("61 * * * *") == "Bad minute"
    assert "five fields" in str(cron.problem("* * * *")) and "five fields" in str(cron.problem("@reboot"))


def test_the_interval_is_the_shortest_gap_on_the_wall_clock() -> None:
    assert cron.period("*/5 * * * *") == timedelta(minutes=5)
    assert cron.period("0 9 * * 1-5") == timedelta(days=1)
    assert cron.period("0 0,20 * * *") == timedelta(hours=4)
    assert cron.period("30 2 * * *") == timedelta(days=1)  # no daylight-saving jump shortens it
    assert cron.duration("90s") == timedelta(seconds=90) and cron.duration("2d") == timedelta(days=2)


def test_a_wildcard_hour_runs_in_both_occurrences_of_a_repeated_hour() -> None:
    berlin = cron.zone("Europe/Berlin")
    assert berlin is not None and cron.zone("Mars/Olympus") is None
    times = cron.times_between("*/30 * * * *", berlin, utc("2026-10-24T23:59:00Z"), utc("2026-10-25T01:30:00Z"))
    # 02:00 and 02:30 local happen twice: four slots an hour apart in UTC pairs, none lost.
    assert [cron.utc_text(t) for t in times] == [
        "2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z"]


def test_moments_need_an_offset() -> None:
    assert cron.parse_moment("2026-12-01T11:05:00+01:00") == datetime(2026, 12, 1, 10, 5, tzinfo=UTC)
    assert cron.parse_moment("2026-12-01T10:05:00Z") == datetime(2026, 12, 1, 10, 5, tzinfo=UTC)
    assert cron.parse_moment("2026-12-01T10:05:00") is None and cron.parse_moment("tomorrow") is None
