"""A cluster as users start one: `dask scheduler` and two `dask worker` processes, each worker
with its own copy of the project (WFOPS_PROJECT), as on machines that do not share the
driver's filesystem (docs/distributed.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dask.project import OPS, drifted, free_port, make_dask_project, read_log
from tests.harness import WFOPS, process_env, wait_for
from tests.runner.helpers import as_json, env_for
from tests.runner.helpers import wfops as cli

pytestmark = pytest.mark.slow
pytest.importorskip("distributed")

DASK = [sys.executable, "-m", "dask"]


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """The workers (all asked at once), then the scheduler: each asked to stop, and killed if it
    dawdles. Once the scheduler is gone (a test killed it), a worker's graceful close only waits
    to reach it, so the workers are killed at once."""
    if not processes:
        return
    scheduler, workers = processes[0], processes[1:]
    gone = scheduler.poll() is not None
    for group in (workers, [scheduler]):
        for process in group:
            if process.poll() is None:
                process.kill() if gone else process.terminate()
        deadline = time.monotonic() + 5
        for process in group:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`dask scheduler` on a free port and two `--no-nanny` workers (so the pid a node sees is
    the worker process this test started), each pointed at the worker copy of the project."""
    from distributed import Client

    driver_root = make_dask_project(tmp_path / "driver")
    worker_root = tmp_path / "worker-copy"
    shutil.copytree(driver_root, worker_root, ignore=shutil.ignore_patterns(".wfops"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    # A lost task comes back to wfops at once (a failed attempt), as docs/distributed.md advises.
    env = process_env({"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", "WFOPS_PROJECT": str(worker_root)})
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(subprocess.Popen([*DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                         "--no-dashboard"], env=env, cwd=tmp_path,
                                        stdout=subprocess.DEVNULL, stderr=(logs / "scheduler").open("wb")))
        for n in (1, 2):
            started.append(subprocess.Popen([*DASK, "worker", f"tcp://{address}", "--nthreads", "1",
                                             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                                            env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                            stderr=(logs / f"worker-{n}").open("wb")))
        deadline = time.monotonic() + 60
        while True:  # the scheduler takes a moment to listen
            try:
                with Client(f"tcp://{address}", timeout=5) as client:
                    client.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield {"address": address, "driver_root": driver_root, "worker_root": worker_root,
               "worker_pids": {p.pid for p in started[1:]}, "scheduler": started[0]}
    finally:
        _stop(started)


def test_a_foreach_runs_on_dask_worker_processes(cluster: dict[str, Any], tmp_path: Path) -> None:
    root, log = cluster["driver_root"], tmp_path / "log.jsonl"
    done = cli(root, "run", "fan.local", "--json", "--executor", f"dask://{cluster['address']}",
               "-i", f"items={json.dumps(list(range(10)))}", "-i", f"log={log}", "-i", "sleep=0.05")
    assert done.code == 0, done.stderr
    out = as_json(done)["output"]["out"]
    assert [o["n"] for o in out] == [i * 10 for i in range(10)]
    pids = {e["pid"] for e in read_log(log)}
    assert pids <= cluster["worker_pids"] and os.getpid() not in pids
    assert len(pids) == 2  # both workers took items (one thread each, items sleep)


def test_workers_whose_copy_of_the_project_changed_are_refused_as_drift(cluster: dict[str, Any],
                                                                       tmp_path: Path) -> None:
    # The workers' copy gets a node whose signature differs from the lock; they have not
    # imported it yet, so they load the changed code and must refuse to run it.
    (cluster["worker_root"] / "ops.py").write_text(drifted(OPS).lstrip("\n"), encoding="utf-8")
    root, log = cluster["driver_root"], tmp_path / "log.jsonl"
    done = cli(root, "run", "fan.local", "--json", "--executor", f"dask://{cluster['address']}",
               "-i", "items=[1, 2]", "-i", f"log={log}")
    assert done.code == 1
    error = as_json(done)["error"]
    assert error["type"] == "capability-drift"
    assert "ops.work on worker tcp://127.0.0.1:" in error["message"]
    assert not log.exists()  # the changed node never ran


def test_a_lost_scheduler_stops_the_run_resumable(cluster: dict[str, Any], tmp_path: Path) -> None:
    """The scheduler dies mid-step: the run is not failed (that would burn its retries on a
    cluster that is gone) but stopped, exit 3, `running` in the store, and resumable."""
    root, log, ready = cluster["driver_root"], tmp_path / "log.jsonl", tmp_path / "ready"
    driver = subprocess.Popen([*WFOPS, "run", "fan.local", "--json", "--executor", f"dask://{cluster['address']}",
                               "-i", "items=[1]", "-i", f"log={log}", "-i", "pause_at=1", "-i", f"ready={ready}",
                               "--project", str(root)], env=process_env(env_for()), cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(ready.exists, what="the item to start on a worker", timeout=120)
        cluster["scheduler"].kill()
        out, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 3, (out, err)
    stopped = json.loads(out)
    run_id = stopped["run_id"]
    assert stopped["error"]["type"] == "RunStopped", stopped
    assert f"the connection to the Dask scheduler at tcp://{cluster['address']} was lost" in stopped["error"]["message"]
    assert "Traceback" not in err, err
    shown = cli(root, "runs", "show", run_id, "--json")
    assert as_json(shown)["status"] == "running"
    resumed = cli(root, "resume", run_id, "--json", "--executor", "local")
    assert resumed.code == 0, resumed.stderr
    assert [o["n"] for o in as_json(resumed)["output"]["out"]] == [10]
