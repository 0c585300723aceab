"""The step cache across real processes: a SIGKILL between the lookup and the commit, and
two CI runners (two working copies) sharing one PostgreSQL store."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import psycopg
import pytest

from tests.cache.project import calls, db_of, make_cache_project, run_json, trace
from tests.harness import wait_for
from tests.runner.helpers import as_json, env_for, spawn, wfops

pytestmark = pytest.mark.slow


def test_sigkill_between_the_lookup_and_the_commit_leaves_nothing_half_written(tmp_path: Path) -> None:
    root = make_cache_project(tmp_path / "proj")
    log, ready = tmp_path / "calls.log", tmp_path / "ready"
    proc = spawn(root, "run", "cached.local", "--json", env=env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_READY=str(ready)))
    try:
        wait_for(ready.exists, what="the cached step's call to start (its lookup missed)")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with db_of(root) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM step_cache").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM cache_hits").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM trace").fetchone()[0] == 0
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
    done = wfops(root, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(calls(log)) == 2  # the killed call, then the resumed one
    with db_of(root) as db:  # the resumed step's success is the one entry, from that run
        assert db.execute("SELECT run_id, step, seq FROM step_cache").fetchall() == [(run_id, "work", 1)]
    served = run_json(root, "cached.local", log=log)
    assert len(calls(log)) == 2
    assert trace(root, served["run_id"])[0]["cached_from"]["run_id"] == run_id


def test_two_runners_on_one_postgresql_store_share_a_hit(tmp_path: Path, pg_url: str) -> None:
    first = make_cache_project(tmp_path / "runner-a")
    second = Path(shutil.copytree(first, tmp_path / "runner-b", ignore=shutil.ignore_patterns(".wfops")))
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    env = {"WFOPS_DB": pg_url}
    made = run_json(first, "cached.local", log=log_a, **env)
    served = wfops(second, "run", "cached.local", "--json", env=env_for(WFOPS_TEST_LOG=str(log_b), **env))
    assert served.returncode == 0, served.stdout + served.stderr
    run = as_json(served)
    assert isinstance(run, dict) and run["output"] == {"text": "HI"}
    assert len(calls(log_a)) == 1 and calls(log_b) == []  # the second runner's node never ran
    entries = as_json(wfops(second, "runs", "trace", run["run_id"], "--json", env=env_for(**env)))
    assert isinstance(entries, list) and entries[0]["cached_from"]["run_id"] == made["run_id"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(b"SELECT hits FROM step_cache").fetchall() == [(1,)]
