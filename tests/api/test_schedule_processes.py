"""Exactly once per slot, with real processes: eight ticks racing on one SQLite file and on
one PostgreSQL database, and a tick SIGKILLed right after its claim."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env, run_cli
from wfops.api import Project

KILLER = '''
import os
import signal
from pathlib import Path

from pydantic import BaseModel

import wfops

ARMED = Path(__file__).resolve().parent / "armed"


class In(BaseModel):
    who: str


class Out(BaseModel):
    text: str


@wfops.node
def greet(payload: In) -> Out:
    if ARMED.exists():  # the run is in the store, its slot claimed: die before the step ends
        os.kill(os.getpid(), signal.SIGKILL)
    return Out(text=f"Hi {payload.who}")
'''

FILES = {
    "sources.yaml": "sources:\n  k: {kind: python, module: killer}\n",
    "killer.py": KILLER,
    "workflows/hello.yaml": """
        name: hello
        input: {type: object, properties: {who: {type: string}}}
        state: {text: {type: string}}
        output: {text: $state.text}
        steps:
          - id: greet
            uses: k.greet
            with: {who: $input.who}
            save: {text: state.text}
            next: end
    """,
    # Three slots are due at 10:05 (09:55, 10:00, 10:05); `allow`, so that a racing tick's
    # run still going never hides a slot from the others.
    "deployments/d.yaml": """
        name: d
        workflow: hello
        input: {who: ana}
        schedule:
          - cron: "*/5 * * * *"
            missed: all
            window: 15m
            overlap: allow
    """,
}
AT = "2026-12-01T10:05:00Z"
SLOTS = ["2026-12-01T09:55:00Z", "2026-12-01T10:00:00Z", "2026-12-01T10:05:00Z"]


def scheduled_project(tmp_path: Path) -> Path:
    write(tmp_path, FILES)
    assert run_cli("compile", cwd=tmp_path).code == 0
    return tmp_path


def race(root: Path, db: str, ticks: int = 8) -> list[dict]:
    procs = [subprocess.Popen([*WFOPS, "schedule", "tick", "--at", AT, "--json", "--db", db], cwd=root,
                              env=process_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(ticks)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    return reports


def assert_once_per_slot(root: Path, db: str, reports: list[dict]) -> None:
    started = sorted(item["slot"] for report in reports for item in report["started"])
    assert started == SLOTS  # each slot started by exactly one of the ticks
    runs = Project(root, db=db).runs(limit=100, scheduled=True)
    assert sorted(str(r.slot["slot"]) for r in runs if r.slot) == SLOTS
    assert len(Project(root, db=db).runs(limit=100)) == 3 and {r.status for r in runs} == {"completed"}
    for report in reports:  # every other tick saw each slot as taken
        assert {item["reason"] for item in report["skipped"]} <= {"already-started"}


@pytest.mark.slow
def test_eight_concurrent_ticks_on_one_sqlite_store_start_one_run_per_slot(tmp_path: Path) -> None:
    root = scheduled_project(tmp_path)
    db = str(root / ".wfops" / "wfops.db")
    assert_once_per_slot(root, db, race(root, db))


@pytest.mark.slow
def test_eight_concurrent_ticks_on_one_postgres_store_start_one_run_per_slot(tmp_path: Path, pg_url: str) -> None:
    root = scheduled_project(tmp_path)
    assert_once_per_slot(root, pg_url, race(root, pg_url))


@pytest.mark.slow
def test_a_tick_killed_right_after_its_claim_leaves_a_run_resume_completes(tmp_path: Path) -> None:
    root = scheduled_project(tmp_path)
    (root / "deployments/d.yaml").write_text((root / "deployments/d.yaml").read_text().replace(
        "missed: all", "missed: latest"))
    assert run_cli("compile", cwd=root).code == 0
    (root / "armed").write_text("")
    killed = subprocess.run([*WFOPS, "schedule", "tick", "--at", AT, "--json"], cwd=root, env=process_env(),
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL
    [run] = Project(root).runs()
    assert run.status == "running" and run.steps == 0  # created with its claim; its step never ended
    assert Project(root).get_run(run.run_id).orphaned
    # The next tick, same minute or later, does not start the slot again.
    (root / "armed").unlink()
    again = run_cli("schedule", "tick", "--at", "2026-12-01T10:06:00Z", "--json", cwd=root).json()
    assert again["started"] == []
    assert again["skipped"][0]["reason"] == "already-started" and again["skipped"][0]["run_id"] == run.run_id
    resumed = run_cli("resume", run.run_id, "--json", cwd=root)
    assert resumed.code == 0 and resumed.json()["output"] == {"text": "Hi ana"}
    assert [r.status for r in Project(root).runs()] == ["completed"]
