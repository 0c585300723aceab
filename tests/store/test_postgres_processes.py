"""Real processes on one PostgreSQL store: eight drivers at once, competing resumes, a
SIGKILLed driver resumed from another working copy, connections killed by the server."""

from __future__ import annotations

import json
import shutil
import signal
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from tests.harness import wait_for
from tests.pgserver import Cluster
from tests.runner.helpers import as_json, env_for, make_run_project, read_log, spawn, wfops

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_project(tmp_path_factory.mktemp("pgdurable"), long_chain=200)


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "ci-runner"))




def rows(url: str, sql: str, *args: object) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql.encode(), args).fetchall()


def steps_of(url: str, run_id: str) -> list[str]:
    return [r[0] for r in rows(url, "SELECT step FROM trace WHERE run_id=%s ORDER BY seq", run_id)]


def running_run(url: str, deployment: str) -> str:
    found = rows(url, "SELECT id FROM runs WHERE deployment=%s AND status='running' "
                      "ORDER BY created_at DESC LIMIT 1", deployment)
    assert found, "the killed run is not in the store"
    return found[0][0]


def orphaned(project: Path, url: str, run_id: str) -> bool:
    shown = wfops(project, "runs", "show", run_id, env=env_for(WFOPS_DB=url))
    return "no process is driving it" in shown.stdout


def test_eight_processes_at_once_on_a_new_database(project: Path, pg_url: str) -> None:
    """Eight drivers start together on an empty database: the schema is created once, and
    every run and trace entry is there."""
    env = env_for(WFOPS_DB=pg_url)
    procs = [spawn(project, "run", "long.local", "--json", env=env) for _ in range(8)]
    outs = [p.communicate(timeout=240) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert err == ""
    run_ids = [json.loads(out)["run_id"] for out, _ in outs]
    assert len(set(run_ids)) == 8
    for run_id in run_ids:
        assert steps_of(pg_url, run_id) == [f"s{i}" for i in range(1, 201)]
        assert rows(pg_url, "SELECT status, steps FROM runs WHERE id=%s", run_id) == [("completed", 200)]
    assert rows(pg_url, "SELECT count(*) FROM schema_version") == rows(pg_url, "SELECT max(version) FROM schema_version")


def test_two_resumes_of_one_run(project: Path, tmp_path: Path, pg_url: str) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    first = spawn(project, "run", "chain.local", env=env_for(
        WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="2", WFOPS_TEST_READY=str(ready)))
    wait_for(ready.exists, what="the first run to pause")
    first.send_signal(signal.SIGKILL)
    first.wait()
    run_id = running_run(pg_url, "chain.local")

    ready.unlink()
    one = spawn(project, "resume", run_id, env=env_for(
        WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="4", WFOPS_TEST_READY=str(ready)))
    try:
        wait_for(ready.exists, what="the first resume to hold the run")
        laptop = Path(shutil.copytree(project, tmp_path / "laptop"))
        two = wfops(laptop, "resume", run_id, env=env_for(WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log)))
        assert two.returncode == 5, two.stderr
        assert "being driven by another process" in two.stderr and f"pid {one.pid}" in two.stderr
        # Refused without waiting: the holder is still blocked in step 4 (it sleeps 60 s) and alive.
        assert one.poll() is None
        assert [e["step"] for e in read_log(log)][-1] == "s4"
        assert not orphaned(laptop, pg_url, run_id)
    finally:
        one.send_signal(signal.SIGKILL)
        one.wait()
    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert steps_of(pg_url, run_id) == [f"s{i}" for i in range(1, 7)]


@pytest.mark.parametrize("pause_at", [1, 4])
def test_sigkill_then_resume_from_another_working_copy(project: Path, tmp_path: Path, pg_url: str,
                                                       pause_at: int) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    proc = spawn(project, "run", "chain.local", "--json", env=env_for(
        WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT=str(pause_at), WFOPS_TEST_READY=str(ready)))
    try:
        wait_for(ready.exists, what="the step to start")
        run_id = running_run(pg_url, "chain.local")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert steps_of(pg_url, run_id) == [f"s{i}" for i in range(1, pause_at)]  # every step before the kill

    # Another machine: its own checkout, nothing local, the same shared store. Nobody
    # cleaned up: the server released the dead driver's lock with its connection.
    other = tmp_path / "other-machine"
    shutil.copytree(project, other)
    shutil.rmtree(other / ".wfops", ignore_errors=True)
    wait_for(lambda: orphaned(other, pg_url, run_id), timeout=10, what="the dead driver's lock to go")
    done = wfops(other, "resume", run_id, "--json", env=env_for(WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"n": 7}
    assert steps_of(pg_url, run_id) == [f"s{i}" for i in range(1, 7)]  # each step committed exactly once
    per_key = Counter(e["key"] for e in read_log(log))
    assert len(per_key) == 6
    in_flight = [e["key"] for e in read_log(log) if e["step"] == f"s{pause_at}"]
    assert len(in_flight) == 2 and len(set(in_flight)) == 1  # re-run with the SAME idempotency key
    assert all(count == 1 for key, count in per_key.items() if key != in_flight[0])
    assert not (other / ".wfops" / "wfops.db").exists()


@pytest.mark.parametrize("victim", ["wfops", "wfops driver%"])
def test_connection_killed_by_the_server_mid_run(project: Path, tmp_path: Path, pg_cluster: Cluster,
                                                 pg_url: str, victim: str) -> None:
    """pg_terminate_backend on the driver's store connection (or on the one holding its run
    lock): the driver stops with a clear message, no committed step is lost, and another
    process resumes the run to its end with every step applied once."""
    log = tmp_path / "effects.log"
    ready = tmp_path / "ready"
    # The run waits inside step 25 while its connection is killed: a run is faster than any poll.
    proc = spawn(project, "run", "long.local", "--json",
                 env=env_for(WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="25",
                             WFOPS_TEST_PAUSE_FOR="2", WFOPS_TEST_READY=str(ready)))
    wait_for(ready.exists, what="step 25 under way")
    database = pg_url.split("@/", 1)[1].split("?")[0]
    with pg_cluster.admin() as admin:
        killed = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE datname = %s AND application_name LIKE %s", (database, victim)).fetchall()
    assert killed and all(ok for (ok,) in killed)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, (out, err)
    assert "was lost" in err and "every step committed before is kept" in err
    run_id = running_run(pg_url, "long.local")
    assert "Traceback" not in err and run_id in err.splitlines()[0]
    assert f"check that the server is up, then `wfops resume {run_id}` continues the run" in err
    stopped = json.loads(out)
    assert stopped["run_id"] == run_id and stopped["error"]["type"] == "StoreError", stopped
    committed = steps_of(pg_url, run_id)
    assert committed == [f"s{i}" for i in range(1, len(committed) + 1)] and len(committed) >= 19

    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_DB=pg_url, WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"n": 200}
    assert steps_of(pg_url, run_id) == [f"s{i}" for i in range(1, 201)]
    per_key = Counter(e["key"] for e in read_log(log))
    assert len(per_key) == 200
    assert sum(per_key.values()) - 200 <= 1  # at most the one in-flight step ran twice
