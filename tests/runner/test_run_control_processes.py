"""Run control where a real process is the point: `wfops cancel` from a second process
while a run is going, and Ctrl-C (a real SIGINT) on `wfops run`."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.harness import wait_for
from tests.runner.helpers import as_json, env_for, read_log, spawn, wfops
from tests.runner.runctl_project import make_runctl_project
from tests.runner.test_durability import db_rows

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runctl_project(tmp_path_factory.mktemp("runctl-proc"))


def _running(project: Path) -> str:
    runs = as_json(wfops(project, "runs", "list", "--status", "running", "--json", "--limit", "1"))
    assert runs, "the run is not in the store"
    return str(runs[0]["run_id"])


def _finish_and_check(project: Path, run_id: str, log: Path) -> None:
    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_AWAKE="1"))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"n": 4}
    steps = Counter(e["step"] for e in read_log(log) if e.get("event") != "end")
    # Committed steps ran once; the step in flight when it stopped ran again on resume.
    assert steps == {"first": 1, "sleepy": 2, "last": 1}


def test_cancel_from_a_second_process_then_resume(project: Path, tmp_path: Path) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_READY=str(ready))
    proc = spawn(project, "run", "long.local", "--input", "s=60", env=env)
    try:
        wait_for(ready.exists, what="the long step to start")
        run_id = _running(project)
        asked = wfops(project, "cancel", run_id)  # this process is not the driver
        assert asked.returncode == 0, asked.stderr
        # Either still running (asked to stop) or already stopped by its driver, which polls.
        assert f"run {run_id}" in asked.stdout
        out, err = proc.communicate(timeout=30)  # the step in flight (a 60 s sleep) is not waited for
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 6, err
    assert f"run {run_id} cancelled" in out and f"wfops resume {run_id}" in out
    shown = as_json(wfops(project, "runs", "show", run_id, "--json"))
    assert shown["status"] == "cancelled" and shown["state"] == {"n": 2}
    assert [e.get("event") for e in read_log(log) if e["step"] == "sleepy"] == ["start"]  # never finished
    _finish_and_check(project, run_id, log)


def test_ctrl_c_stops_the_run_cleanly_and_says_how_to_resume(project: Path, tmp_path: Path) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_READY=str(ready))
    proc = spawn(project, "run", "long.local", "--input", "s=60", env=env)
    try:
        wait_for(ready.exists, what="the long step to start")
        run_id = _running(project)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 6, err
    assert f"run {run_id} cancelled" in out and f"resume with: wfops resume {run_id}" in out
    assert "Traceback" not in err
    assert as_json(wfops(project, "runs", "show", run_id, "--json"))["status"] == "cancelled"
    _finish_and_check(project, run_id, log)


def test_sigkill_mid_parallel_resumes_without_repeating_finished_branch_steps(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "effects.log"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_DIR=str(tmp_path), WFOPS_TEST_WAIT="120")
    proc = spawn(project, "run", "par.local", env=env)
    try:
        wait_for((tmp_path / "a2-started").exists, what="branch a's last step to start")
        run_id = _running(project)
        wait_for(lambda: ("both/b/last",) in db_rows(project, "SELECT step FROM trace WHERE run_id=?", run_id),
                 what="branch b to commit its last step")
    finally:
        proc.kill()
        proc.wait()
    committed = sorted(r[0] for r in db_rows(project, "SELECT step FROM trace WHERE run_id=?", run_id))
    assert committed == ["both/a/meet", "both/b/last", "both/b/meet"]  # killed with a2 in flight

    (tmp_path / "release").write_text("go")
    done = wfops(project, "resume", run_id, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"tags": ["a1", "b1", "b2"], "last": "a2"}
    starts = Counter(e["tag"] for e in read_log(log) if e["event"] == "start")
    assert starts == {"a1": 1, "b1": 1, "b2": 1, "a2": 2}  # only the step in flight ran again
    steps = [r[0] for r in db_rows(project, "SELECT step FROM trace WHERE run_id=? ORDER BY seq", run_id)]
    assert sorted(steps) == ["both", "both/a/meet", "both/a/slow", "both/b/last", "both/b/meet"]
