"""Real processes: SIGKILL mid-run then resume, concurrent runs on one store, competing resumes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.harness import wait_for
from tests.runner.helpers import as_json, env_for, make_run_project, read_log, spawn, wfops

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_project(tmp_path_factory.mktemp("durable"), long_chain=200)




def db_rows(project: Path, sql: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(project / ".wfops" / "wfops.db")
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def running_run(project: Path, deployment: str) -> str:
    runs = as_json(wfops(project, "runs", "list", "--deployment", deployment, "--status", "running",
                         "--json", "--limit", "1"))
    assert runs, "the killed run is not in the store"
    return runs[0]["run_id"]


def integrity_ok(project: Path) -> None:
    assert db_rows(project, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.parametrize("pause_at", [1, 3, 6])
def test_sigkill_mid_step_then_resume(project: Path, tmp_path: Path, pause_at: int) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT=str(pause_at), WFOPS_TEST_READY=str(ready))
    proc = spawn(project, "run", "chain.local", "--json", env=env)
    try:
        wait_for(ready.exists, what="the step to start")
        run_id = running_run(project, "chain.local")
        busy = wfops(project, "resume", run_id)  # the live driver holds the run
        assert busy.returncode == 5 and f"pid {proc.pid}" in busy.stderr, busy.stderr
        if pause_at == 3:  # nor may it be deleted under its driver
            assert wfops(project, "runs", "rm", run_id).returncode == 5
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    committed = [r[0] for r in db_rows(project, "SELECT step FROM trace WHERE run_id=? ORDER BY seq", run_id)]
    assert committed == [f"s{i}" for i in range(1, pause_at)]  # every step before the kill, no more
    if pause_at == 3:  # crashed, not finished: `runs rm` refuses it without --force
        crashed = wfops(project, "runs", "rm", run_id)
        assert crashed.returncode == 2 and "running" in crashed.stderr and "--force" in crashed.stderr

    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"n": 7}
    steps = [e["step"] for e in as_json(wfops(project, "runs", "trace", run_id, "--json"))]
    assert steps == [f"s{i}" for i in range(1, 7)]  # each step committed exactly once
    effects = read_log(log)
    per_key = Counter(e["key"] for e in effects)
    assert len(per_key) == 6  # one idempotency key per step
    in_flight = [e["key"] for e in effects if e["step"] == f"s{pause_at}"]
    assert len(in_flight) == 2 and len(set(in_flight)) == 1  # re-run with the SAME key
    assert all(count == 1 for key, count in per_key.items() if key != in_flight[0])
    integrity_ok(project)


@pytest.mark.parametrize("after_steps", [5, 60])
def test_sigkill_at_an_arbitrary_moment(project: Path, tmp_path: Path, after_steps: int) -> None:
    log = tmp_path / "effects.log"
    proc = spawn(project, "run", "long.local", "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    wait_for(lambda: len(read_log(log)) >= after_steps, what=f"{after_steps} steps")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run_id = running_run(project, "long.local")
    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"n": 200}
    steps = [r[0] for r in db_rows(project, "SELECT step FROM trace WHERE run_id=? ORDER BY seq", run_id)]
    assert steps == [f"s{i}" for i in range(1, 201)]
    per_key = Counter(e["key"] for e in read_log(log))
    assert len(per_key) == 200
    assert sum(per_key.values()) - 200 <= 1  # at most the one in-flight step ran twice
    integrity_ok(project)


def test_four_processes_share_one_store(project: Path) -> None:
    procs = [spawn(project, "run", "long.local", "--json") for _ in range(4)]
    outs = [p.communicate(timeout=60) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err
    run_ids = [json.loads(out)["run_id"] for out, _ in outs]
    assert len(set(run_ids)) == 4
    for run_id in run_ids:
        assert db_rows(project, "SELECT count(*) FROM trace WHERE run_id=?", run_id) == [(200,)]
        assert db_rows(project, "SELECT status, steps FROM runs WHERE id=?", run_id) == [("completed", 200)]
    integrity_ok(project)


def test_two_resumes_of_one_run(project: Path, tmp_path: Path) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="2", WFOPS_TEST_READY=str(ready))
    first = spawn(project, "run", "chain.local", env=env)
    wait_for(ready.exists, what="the first run to pause")
    first.send_signal(signal.SIGKILL)
    first.wait()
    run_id = running_run(project, "chain.local")

    ready.unlink()
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="4", WFOPS_TEST_READY=str(ready))
    one = spawn(project, "resume", run_id, env=env)
    two = None
    try:
        wait_for(ready.exists, what="the first resume to hold the run")
        two = wfops(project, "resume", run_id, env=env_for(WFOPS_TEST_LOG=str(log)))
        assert two.returncode == 5, two.stderr
        assert "being driven by another process" in two.stderr and f"pid {one.pid}" in two.stderr
        # Refused without waiting: the holder is still blocked in step 4 (it sleeps 60 s) and alive.
        assert one.poll() is None
        assert [e["step"] for e in read_log(log)][-1] == "s4"
    finally:
        one.send_signal(signal.SIGKILL)
        one.wait()
    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    steps = [e["step"] for e in as_json(wfops(project, "runs", "trace", run_id, "--json"))]
    assert steps == [f"s{i}" for i in range(1, 7)]
    assert os.path.exists(project / ".wfops" / "wfops.db")
    integrity_ok(project)
