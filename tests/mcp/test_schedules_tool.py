"""The MCP face of schedules: `list_schedules`, and each deployment's schedule in `list_project`."""

from __future__ import annotations

from pathlib import Path

from tests.api.test_schedules import project
from tests.mcp.test_server_tools import Call, drive


def test_list_schedules_and_the_schedule_in_list_project(tmp_path: Path) -> None:
    found = project(tmp_path, '  - name: nightly\n    cron: "30 2 * * *"\n    timezone: Europe/Berlin\n')
    run = found.tick(at="2026-12-02T01:30:00Z").started[0]

    async def script(call: Call) -> None:
        listed = await call("list_schedules", {"count": 1})
        [entry] = listed["schedules"]
        assert (entry["deployment"], entry["entry"], entry["window"]) == ("d", "nightly", "1d")
        assert entry["last"] == {"slot": "2026-12-02T01:30:00Z", "run_id": run.run_id, "status": "completed"}
        assert len(entry["next"]) == 1 and entry["next"][0]["local"].endswith("T02:30:00+01:00")
        assert listed["next_actions"][0]["tool"] == "list_runs"
        shown = await call("list_project", {})
        [deployment] = shown["deployments"]
        assert deployment["schedule"] == [{"name": "nightly", "cron": "30 2 * * *", "timezone": "Europe/Berlin",
                                           "input": {}, "overlap": "skip", "missed": "latest", "window": None,
                                           "enabled": True}]
        unknown = await call("list_schedules", {"deployment": "nope"})
        assert unknown["ok"] is False and "unknown deployment 'nope'" in unknown["error"]["message"]

    drive(tmp_path, script)
