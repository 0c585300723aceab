"""Each MCP result object renders one record of the core API: every key the core gives is
there, and nothing more than what this face adds, declared below. Pydantic ignores unknown
keys, so a key added to a core record and not to its MCP model would vanish from every
agent's answer without a word: this is what says so."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.api.test_schedules import project
from tests.harness import run_cli
from tests.mcp.test_server_tools import Call, drive
from wfops.api.authoring import DeploymentEntry, SourceEntry, WorkflowEntry
from wfops.api.results import CapabilityInfo
from wfops.api.runs import RUN_KEYS
from wfops.api.schedules import ScheduleInfo, SlotTime
from wfops.diagnostics import FIELDS, SUBJECT_FIELDS
from wfops.engine.types import Interrupt, TraceEntry
from wfops.mcpserver import models
from wfops.testing.results import CaseResult

ENTRY = TraceEntry(seq=1, step="s", kind="call", attempt=1, input={}, outcome="ok", output={}, state_changes=[],
                   next="end", error=None, started_at="t0", ended_at="t1", extra={"x": 1},
                   cached={"run_id": "r", "step": "s", "seq": 1, "saved": 0.1})
CAPABILITY = CapabilityInfo(ref="std.echo", source="std", source_kind="std", name="echo", description="",
                            outcomes=["ok"], contract_hash="h", origin="live", input_schema={}, output_schema={},
                            annotations={"readOnlyHint": True}, defaults={"timeout": 1})
SCHEDULE = ScheduleInfo(deployment="d", entry="e", cron="* * * * *", timezone="UTC", enabled=True, overlap="skip",
                        missed="latest", window="1d", next=[SlotTime("u", "l")], last_slot="s", last_run="r",
                        last_status="completed")
CASE = CaseResult(name="n", file="f", line=1, column=1, workflow="w", status="passed")

# (MCP model, the keys the core record gives, the keys only the MCP face adds)
RENDERED: list[tuple[type[BaseModel], list[str], set[str]]] = [
    # A scheduled run's `slot` is not rendered: `list_schedules` gives each entry's last slot and run.
    (models.RunOut, list(RUN_KEYS), {"state"}),
    (models.InterruptOut, [f.name for f in fields(Interrupt)], set()),
    (models.TraceEntryOut, list(ENTRY.to_dict()), {"logs", "run_log"}),
    (models.CapabilityOut, list(CAPABILITY.to_dict()), set()),
    (models.ScheduleOut, list(SCHEDULE.to_dict()), set()),
    (models.CaseOut, list(CASE.to_dict()), set()),
    (models.DiagnosticOut, [*FIELDS, *SUBJECT_FIELDS], set()),
    (models.ProjectWorkflowOut, [f.name for f in fields(WorkflowEntry)], set()),
    (models.ProjectDeploymentOut, [f.name for f in fields(DeploymentEntry)], set()),
    (models.ProjectSourceOut, [f.name for f in fields(SourceEntry)], set()),
]


@pytest.mark.parametrize(("model", "core", "added"), RENDERED, ids=[m.__name__ for m, _, _ in RENDERED])
def test_an_mcp_object_holds_every_key_of_its_core_record_and_only_those(model: type[BaseModel], core: list[str],
                                                                         added: set[str]) -> None:
    rendered = list(model.model_fields)
    assert [key for key in core if key not in rendered] == [], "keys the MCP face drops"
    assert [key for key in rendered if key not in core and key not in added] == [], "keys no core record gives"


def test_the_run_object_keeps_the_documented_order() -> None:
    assert list(models.RunOut.model_fields)[:len(RUN_KEYS)] == list(RUN_KEYS)


def test_a_run_reads_the_same_through_the_cli_and_mcp(tmp_path: Path) -> None:
    found = project(tmp_path, '  - name: nightly\n    cron: "30 2 * * *"\n')
    found.tick(at="2026-12-02T02:30:00Z")
    found.run("d")
    listed = run_cli("runs", "list", "--json", cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    by_cli = {run["run_id"]: run for run in json.loads(listed.stdout)}
    seen: dict[str, Any] = {}

    async def script(call: Call) -> None:
        seen.update({run["run_id"]: run for run in (await call("list_runs", {}))["runs"]})

    drive(tmp_path, script)
    assert set(seen) == set(by_cli) and len(seen) == 2
    for run_id, cli_run in by_cli.items():
        assert {key: seen[run_id][key] for key in cli_run} == cli_run
        assert seen[run_id]["started_at"] and seen[run_id]["duration_ms"] is not None
