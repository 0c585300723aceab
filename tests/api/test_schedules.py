"""Schedules ticked with a given clock (`at=`), never by sleeping: what starts, what is
skipped and why, in real projects on real SQLite stores."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import run_cli
from wfops.api import Project

HELLO = """
    name: hello
    input: {type: object, properties: {who: {type: string}}}
    state: {text: {type: string}}
    output: {text: $state.text}
    steps:
      - id: greet
        uses: std.format
        with: {template: "Hi {who}", values: {who: $input.who}}
        save: {text: state.text}
        next: end
"""

WAIT = """
    name: wait
    input: {type: object}
    state: {decision: {type: object}}
    output: {decision: $state.decision}
    steps:
      - id: ask
        interrupt: approval
        request: {question: "go?"}
        save: state.decision
        on: {approved: end}
"""


def project(tmp_path: Path, schedule: str, *, workflow: str = "hello") -> Project:
    write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/hello.yaml": HELLO, "workflows/wait.yaml": WAIT,
                     "deployments/d.yaml": f"name: d\nworkflow: {workflow}\ninput: {{who: ana}}\n"
                                           f"schedule:\n{schedule}"})
    assert run_cli("compile", cwd=tmp_path).code == 0
    return Project(tmp_path)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_five_minute_schedule_ticked_every_minute_of_an_hour_starts_twelve_runs(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n    input: {who: bo}\n')
    start = at("2026-12-01T10:00:30Z")
    started = []
    for minute in range(60):
        report = found.tick(at=iso(start + timedelta(minutes=minute)))
        started += report.started
    assert [item.slot for item in started] == [f"2026-12-01T10:{m:02d}:00Z" for m in range(0, 60, 5)]
    runs = found.runs(scheduled=True, limit=100)
    assert len(runs) == 12 and {r.status for r in runs} == {"completed"}
    assert runs[0].output == {"text": "Hi bo"}  # the entry's input merged over the deployment's
    assert runs[0].slot == {"deployment": "d", "entry": "*/5 * * * * UTC", "slot": "2026-12-01T10:55:00Z"}


def test_two_ticks_in_the_same_minute_start_one_run(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n')
    first = found.tick(at="2026-12-01T10:05:00Z")
    second = found.tick(at="2026-12-01T10:05:40Z")
    assert [i.slot for i in first.started] == ["2026-12-01T10:05:00Z"]
    assert second.started == []
    assert [(i.reason, i.run_id) for i in second.skipped] == [("already-started", first.started[0].run_id)]
    assert len(found.runs(limit=100)) == 1


def test_overlap_skip_starts_nothing_while_the_previous_run_is_still_going(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n', workflow="wait")
    first = found.tick(at="2026-12-01T10:05:00Z")
    assert [i.status for i in first.started] == ["interrupted"]  # still going: it waits for a person
    second = found.tick(at="2026-12-01T10:10:00Z")
    assert second.started == []
    assert [(i.slot, i.reason) for i in second.skipped] == [("2026-12-01T10:10:00Z", "overlap")]
    assert len(found.runs(limit=100)) == 1
    found.resume(first.started[0].run_id, outcome="approved", payload={})
    third = found.tick(at="2026-12-01T10:11:00Z")  # the 10:10 slot is still in its window
    assert [i.slot for i in third.started] == ["2026-12-01T10:10:00Z"]


def test_overlap_allow_and_cancel_previous(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n    overlap: allow\n'
                              '  - name: other\n    cron: "*/5 * * * *"\n    overlap: cancel_previous\n',
                    workflow="wait")
    report = found.tick(at="2026-12-01T10:05:00Z")
    # The first entry's run is still waiting when the second entry's slot starts: it is cancelled.
    assert [i.entry for i in report.started] == ["*/5 * * * * UTC", "other"]
    first, second = (found.get_run(str(i.run_id)) for i in report.started)
    assert (first.status, second.status) == ("cancelled", "interrupted")
    again = found.tick(at="2026-12-01T10:10:00Z")
    assert len(again.started) == 2  # `allow` starts although `other`'s run waits; then `other` cancels both


def test_missed_latest_after_a_gap_starts_one_and_all_starts_each_slot_in_the_window(tmp_path: Path) -> None:
    latest = project(tmp_path / "latest", '  - cron: "0 * * * *"\n    window: 4h\n')
    latest.tick(at="2026-12-01T09:00:00Z")
    report = latest.tick(at="2026-12-01T12:10:00Z")  # three hours without a tick
    assert [i.slot for i in report.started] == ["2026-12-01T12:00:00Z"]
    assert sorted((i.slot, i.reason) for i in report.skipped) == [
        ("2026-12-01T09:00:00Z", "already-started"), ("2026-12-01T10:00:00Z", "missed"),
        ("2026-12-01T11:00:00Z", "missed")]

    every = project(tmp_path / "all", '  - cron: "0 * * * *"\n    missed: all\n    window: 150m\n')
    every.tick(at="2026-12-01T09:00:00Z")
    report = every.tick(at="2026-12-01T12:10:00Z")
    # Within the window (since 09:40) only: 10:00, 11:00, 12:00, each in order.
    assert [i.slot for i in report.started] == ["2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z",
                                                "2026-12-01T12:00:00Z"]
    assert len(every.runs(limit=100)) == 6  # the first tick caught up 07:00, 08:00 and 09:00 too


def test_missed_none_starts_only_a_time_of_the_ticks_own_minute(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n    missed: none\n')
    late = found.tick(at="2026-12-01T10:07:00Z")
    assert late.started == [] and [i.reason for i in late.skipped] == ["missed"]
    assert [i.slot for i in found.tick(at="2026-12-01T10:10:59Z").started] == ["2026-12-01T10:10:00Z"]


def test_a_disabled_entry_starts_nothing_and_says_so(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n    enabled: false\n')
    report = found.tick(at="2026-12-01T10:05:00Z")
    assert report.started == [] and [i.reason for i in report.skipped] == ["disabled"]


def test_dry_run_starts_nothing(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "*/5 * * * *"\n')
    report = found.tick(at="2026-12-01T10:05:00Z", dry_run=True)
    assert [i.slot for i in report.started] == ["2026-12-01T10:05:00Z"] and report.started[0].run_id is None
    assert report.to_dict()["would_start"][0]["slot"] == "2026-12-01T10:05:00Z"
    assert found.runs() == []


@pytest.mark.parametrize(("days", "expected"), [
    # Spring forward (29 March 2026: 02:00 -> 03:00 local): 02:30 does not exist that night, the
    # run starts at the first minute after the gap, 03:00 CEST (01:00 UTC), once.
    (("2026-03-28", "2026-03-29", "2026-03-30"),
     ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]),
    # Fall back (25 October 2026: 03:00 -> 02:00 local): 02:30 happens twice; the run starts
    # once, at the first (02:30 CEST, 00:30 UTC).
    (("2026-10-24", "2026-10-25", "2026-10-26"),
     ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]),
])
def test_a_daily_0230_run_in_berlin_neither_skips_nor_doubles_across_daylight_saving(
        tmp_path: Path, days: tuple[str, ...], expected: list[str]) -> None:
    found = project(tmp_path, '  - cron: "30 2 * * *"\n    timezone: Europe/Berlin\n')
    started = []
    for day in days:  # every ten minutes of the small hours of each day, UTC
        base = at(f"{day}T00:00:00Z")
        for minute in range(0, 3 * 60, 10):
            started += found.tick(at=iso(base + timedelta(minutes=minute))).started
    # (The first tick also catches the day before's run, within its one-day window.)
    assert [i.slot for i in started if i.slot >= days[0]] == expected


def test_schedules_list_the_next_times_in_the_zone_and_utc_and_the_last_run(tmp_path: Path) -> None:
    found = project(tmp_path, '  - name: nightly\n    cron: "@daily"\n    timezone: Europe/Berlin\n')
    [entry] = found.schedules(at="2026-12-01T10:00:00Z", count=2)
    assert [(t.local, t.utc) for t in entry.next] == [
        ("2026-12-02T00:00:00+01:00", "2026-12-01T23:00:00Z"), ("2026-12-03T00:00:00+01:00", "2026-12-02T23:00:00Z")]
    assert entry.window == "1d" and entry.to_dict()["last"] is None
    run = found.tick(at="2026-12-01T23:00:00Z").started[0]
    [entry] = found.schedules(at="2026-12-01T23:01:00Z")
    assert entry.to_dict()["last"] == {"slot": "2026-12-01T23:00:00Z", "run_id": run.run_id, "status": "completed"}


def test_the_cli_faces(tmp_path: Path) -> None:
    project(tmp_path, '  - cron: "*/5 * * * *"\n')
    dry = run_cli("schedule", "tick", "--at", "2026-12-01T11:05:00+01:00", "--dry-run", "--json", cwd=tmp_path)
    assert dry.code == 0 and dry.json()["would_start"][0]["slot"] == "2026-12-01T10:05:00Z"
    done = run_cli("schedule", "tick", "--at", "2026-12-01T10:05:00Z", "--json", cwd=tmp_path)
    run_id = done.json()["started"][0]["run_id"]
    again = run_cli("schedule", "tick", "--at", "2026-12-01T10:05:00Z", cwd=tmp_path)
    assert again.code == 0 and f"already-started: run {run_id} was started for this slot" in again.stdout
    shown = run_cli("runs", "show", run_id, cwd=tmp_path)
    assert "slot       2026-12-01T10:05:00Z of schedule entry `*/5 * * * * UTC`" in shown.stdout
    assert json.loads(run_cli("runs", "show", run_id, "--json", cwd=tmp_path).stdout)["slot"]["slot"] == \
        "2026-12-01T10:05:00Z"
    assert run_cli("run", "d", cwd=tmp_path).code == 0  # a run not started by a schedule
    listed = run_cli("runs", "list", "--scheduled", "--json", cwd=tmp_path).json()
    assert [r["run_id"] for r in listed] == [run_id]
    nxt = run_cli("schedule", "next", "d", "-n", "1", "--at", "2026-12-01T10:05:00Z", cwd=tmp_path)
    assert "next  2026-12-01T10:10:00+00:00  (2026-12-01T10:10:00Z)" in nxt.stdout
    bad = run_cli("schedule", "tick", "--at", "2026-12-01 10:05", cwd=tmp_path)
    assert bad.code == 2 and bad.stderr.startswith("wfops: error: --at '2026-12-01 10:05' is not an ISO 8601")
    assert run_cli("schedule", "next", "nope", cwd=tmp_path).code == 2


def test_a_tick_whose_run_is_refused_exits_2_and_says_why(tmp_path: Path) -> None:
    project(tmp_path, '  - cron: "*/5 * * * *"\n')
    (tmp_path / "workflows/hello.yaml").write_text((tmp_path / "workflows/hello.yaml").read_text()
                                                   .replace("Hi {who}", "Hello {who}"))
    done = run_cli("schedule", "tick", "--at", "2026-12-01T10:05:00Z", "--json", cwd=tmp_path)
    assert done.code == 2
    [item] = done.json()["skipped"]
    assert item["reason"] == "refused" and "refused" in item["detail"]
    # Nothing was claimed: once the lock is fresh, the same slot starts.
    assert run_cli("compile", cwd=tmp_path).code == 0
    assert run_cli("schedule", "tick", "--at", "2026-12-01T10:06:00Z", cwd=tmp_path).code == 0
    assert len(Project(tmp_path).runs(scheduled=True)) == 1


def test_now_is_the_default_moment(tmp_path: Path) -> None:
    found = project(tmp_path, '  - cron: "* * * * *"\n')
    report = found.tick()
    assert len(report.started) == 1
    assert abs(at(report.at) - datetime.now(UTC)) < timedelta(days=1)


def test_validate_points_at_each_wrong_schedule_node(tmp_path: Path) -> None:
    write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/hello.yaml": HELLO, "deployments/d.yaml": """
        name: d
        workflow: hello
        schedule:
          - cron: "0 0 31 2 *"
            timezone: Mars/Olympus
          - cron: "@hourly"
            window: 10m
          - cron: "0 0 31 2 *"
            timezone: Mars/Olympus
    """, "deployments/e.yaml": """
        name: e
        workflow: hello
        schedule:
          - cron: "* * * *"
            window: 5 minutes
    """})
    done = run_cli("validate", cwd=tmp_path)
    assert done.code == 1
    found = [line for line in done.stdout.splitlines() if line.startswith("deployments/")]
    assert found == [
        "deployments/d.yaml:4:11: error[invalid-cron] cron `0 0 31 2 *` names no time: Bad day-of-month",
        "deployments/d.yaml:5:15: error[unknown-timezone] `Mars/Olympus` is not an IANA time zone",
        "deployments/d.yaml:7:13: error[short-window] window 10m is shorter than the 1h between two times of `@hourly`",
        "deployments/d.yaml:8:5: error[duplicate-schedule] schedule entry 2 has the same cron and timezone as entry 0 "
        "(`0 0 31 2 * Mars/Olympus`): their runs would share slots",
        "deployments/d.yaml:8:11: error[invalid-cron] cron `0 0 31 2 *` names no time: Bad day-of-month",
        "deployments/d.yaml:9:15: error[unknown-timezone] `Mars/Olympus` is not an IANA time zone",
        # A file off its schema is checked no further: its shape first.
        "deployments/e.yaml:4:11: error[invalid-value] `schedule[0].cron`: \"* * * *\" is not a valid cron expression",
        "deployments/e.yaml:5:13: error[invalid-value] `schedule[0].window`: \"5 minutes\" is not a valid duration",
    ]
