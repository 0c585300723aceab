"""Runs on a LocalCluster of worker processes: where items run, what comes back, what a lost
worker, a timeout, a killed driver and stale worker code do."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import distributed
import pytest

import wfops
from tests.dask.project import OPS, drifted, make_dask_project, read_log
from tests.harness import wait_for
from tests.runner.helpers import as_json, env_for, spawn
from tests.runner.helpers import wfops as cli

pytestmark = pytest.mark.slow


def _run(root: Path, deployment: str, **values: Any) -> Any:
    done = cli(root, "run", deployment, "--json", *[a for k, v in values.items() for a in ("-i", f"{k}={json.dumps(v)}")])
    return done, as_json(done)


def test_items_run_in_worker_processes_and_come_back_in_item_order(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    log = tmp_path / "log.jsonl"
    done, run = _run(root, "fan.dask", items=list(range(12)), log=str(log), sleep=0.02)
    assert done.code == 0, done.stderr
    out = run["output"]["out"]
    assert [o["n"] for o in out] == [i * 10 for i in range(12)]
    # $context.idempotency_key reaches the capability on the worker as the engine made it.
    assert [o["key"] for o in out] == [f"{run['run_id']}:fan#1[{i}]" for i in range(12)]
    pids = {o["pid"] for o in out}
    assert os.getpid() not in pids
    assert pids <= {nanny.pid for nanny in cluster.workers.values()}
    assert sorted(e["n"] for e in read_log(log)) == list(range(12))  # each item ran once


def test_a_plain_call_step_runs_on_a_worker_too(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    done, run = _run(root, "one.dask", log=str(tmp_path / "log.jsonl"))
    assert done.code == 0, done.stderr
    got = run["output"]["got"]
    assert got["n"] == 70 and got["key"] == f"{run['run_id']}:call#1"
    assert got["pid"] in {nanny.pid for nanny in cluster.workers.values()}


def test_a_failing_item_reports_the_type_and_message_a_local_run_reports(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    log = tmp_path / "log.jsonl"
    local_done, local = _run(root, "fan.local", items=[1, 2, 3], log=str(log), fail_at=2)
    dask_done, remote = _run(root, "fan.dask", items=[1, 2, 3], log=str(log), fail_at=2)
    assert local_done.code == dask_done.code == 1
    assert remote["error"] == local["error"] == {"type": "ValueError", "message": "item 1: bad item 2",
                                                 "step": "fan"}
    # retry: {attempts: 2} on the step: the failing item was tried twice on the cluster too
    assert sum(1 for e in read_log(log) if e["n"] == 2 and os.getpid() != e["pid"]) == 2


def test_a_step_past_its_timeout_is_cancelled_on_the_cluster(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    left: list[list[str]] = []

    def on_step(entry: Any) -> None:
        # Called in the driver's event loop as the failed step commits, before the run (and its
        # Dask client) ends: only an explicit cancel can have reached the scheduler by now.
        if entry.step == "call":
            deadline = time.monotonic() + 10
            while True:
                keys = [str(k) for k in list(cluster.scheduler.tasks) if str(k).startswith("wfops-")]
                if not keys or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            left.append(keys)

    run = wfops.Project(root).run("one.dask", {"log": str(tmp_path / "log.jsonl"), "sleep": 60}, on_step=on_step)
    assert run.status == "failed" and run.error is not None
    assert run.error["type"] == "Timeout"
    assert left == [[]], "the timed-out task was still on the scheduler"


def test_a_worker_killed_mid_task_costs_only_a_retry(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    log, ready = tmp_path / "log.jsonl", tmp_path / "ready"
    driver = spawn(root, "run", "fan.dask", "--json", "-i", "items=[0,1,2,3,4,5]", "-i", f"log={log}",
                   "-i", "pause_at=2", "-i", f"ready={ready}", env=env_for())
    try:
        pid = int(wait_for(lambda: ready.exists() and ready.read_text(), what="item 2 to start on a worker"))
        assert pid != driver.pid
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, stderr
    run = json.loads(stdout)
    assert [o["n"] for o in run["output"]["out"]] == [0, 10, 20, 30, 40, 50]
    failed, item = (e for e in wfops.Project(root).trace(run["run_id"]) if e.step == "fan[2]")
    assert (failed.kind, failed.attempt) == ("retry", 1) and failed.error  # the attempt the kill cost
    assert (item.kind, item.attempt, item.error) == ("item", 2, None)
    runs_of_2 = [e for e in read_log(log) if e["n"] == 2]
    assert [e["attempt"] for e in runs_of_2] == [1, 2]
    assert runs_of_2[1]["pid"] != pid


def test_a_driver_killed_mid_foreach_and_resumed_redoes_no_committed_item(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    log = tmp_path / "log.jsonl"
    items = list(range(16))
    driver = spawn(root, "run", "fan.dask", "--json", "-i", f"items={json.dumps(items)}", "-i", f"log={log}",
                   "-i", "sleep=0.3", env=env_for())
    project = wfops.Project(root)
    try:
        def committed() -> list[Any]:
            runs = project.runs()
            return [e for e in project.trace(runs[0].run_id) if e.kind == "item"] if runs else []

        wait_for(lambda: len(committed()) >= 5, what="five committed items")
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    run_id = project.runs()[0].run_id
    before = {int(e.step.split("[")[1].rstrip("]")) for e in project.trace(run_id) if e.kind == "item"}
    assert 5 <= len(before) < len(items)
    ran_before = len(read_log(log))
    time.sleep(1)  # items in flight on the workers when the driver died may still finish (uncommitted)
    done = cli(root, "resume", run_id, "--json")  # on the cluster again: the run remembers its executor
    assert done.code == 0, done.stderr
    assert [o["n"] for o in as_json(done)["output"]["out"]] == [i * 10 for i in items]
    after = read_log(log)[ran_before:]
    assert not {e["n"] for e in after} & before, "a committed item ran again"
    assert {e["n"] for e in after} | before >= set(items)
    assert all(e["pid"] != os.getpid() for e in after)


def test_a_worker_with_other_code_than_the_lock_is_refused_as_drift(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    log = tmp_path / "log.jsonl"
    # Fresh workers first: one an earlier test killed may still be joining (its replacement would
    # import the new code below); then until every worker has loaded `ops` as it was (the
    # scheduler may give one worker all items).
    workers = len(cluster.workers)  # as the fixture made it (the scheduler's view lags behind)
    with distributed.Client(cluster) as client:
        client.restart()
        client.wait_for_workers(workers)
    for _ in range(20):
        done, _ = _run(root, "fan.dask", items=[1, 2, 3, 4], log=str(log))
        assert done.code == 0
        if len({entry["pid"] for entry in read_log(log)}) == workers:
            break
    else:
        raise AssertionError("some worker never ran an item")
    # The node's signature changes and the lock with it; the workers still run the old code.
    (root / "ops.py").write_text(drifted(OPS).lstrip("\n"), encoding="utf-8")
    assert cli(root, "compile").code == 0
    ran = len(read_log(log))
    done, run = _run(root, "fan.dask", items=[1, 2, 3, 4], log=str(log))
    assert done.code == 1
    assert run["error"]["type"] == "capability-drift"
    assert "does not match the run's lock" in run["error"]["message"]
    assert len(read_log(log)) == ran  # a refused worker never ran the node
    # Locally the new code runs: the refusal was the workers', not the workflow's.
    done, _ = _run(root, "fan.local", items=[1, 2], log=str(log))
    assert done.code == 0


def test_std_calls_stay_in_the_driver(cluster: Any, tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    (root / "workflows" / "hello.yaml").write_text(
        "name: hello\ninput: {type: object}\nstate: {v: {}}\noutput: {v: $state.v}\nsteps:\n"
        "  - {id: e, uses: std.echo, with: {value: 42}, save: {value: state.v}, next: end}\n", encoding="utf-8")
    (root / "deployments" / "hello.yaml").write_text("name: hello.local\nworkflow: hello\n", encoding="utf-8")
    assert cli(root, "compile").code == 0
    seen: list[str] = []
    cluster.scheduler.add_plugin(_Seen(seen), name="wfops-test-seen")
    try:
        done = cli(root, "run", "hello.local", "--json", "--executor", "dask://" + cluster.scheduler_address[6:])
        assert done.code == 0, done.stderr
        assert as_json(done)["output"] == {"v": 42}
        assert seen == []  # no task reached the scheduler
        done, _ = _run(root, "fan.dask", items=[1], log=str(tmp_path / "log.jsonl"))
        assert done.code == 0
        assert len(seen) == 1 and seen[0].startswith("wfops-ops.work-")  # a python call does
    finally:
        cluster.scheduler.remove_plugin(name="wfops-test-seen")


class _Seen:
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def update_graph(self, scheduler: Any, *, keys: Any = (), **kwargs: Any) -> None:
        self.seen.extend(str(k) for k in keys)


UNREADABLE = OPS.replace('        raise ValueError(f"bad item {payload.n}")', '        raise Unreadable()').replace(
    "import wfops\n", '''import wfops


class Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")
''')


def test_an_exception_whose_str_raises_is_reported_as_a_local_run_reports_it(cluster: Any, tmp_path: Path) -> None:
    assert "raise Unreadable()" in UNREADABLE
    root = make_dask_project(tmp_path, cluster.scheduler_address, ops=UNREADABLE)
    log = tmp_path / "log.jsonl"
    local_done, local = _run(root, "fan.local", items=[1, 2], log=str(log), fail_at=2)
    dask_done, remote = _run(root, "fan.dask", items=[1, 2], log=str(log), fail_at=2)
    assert local_done.code == dask_done.code == 1
    assert remote["error"] == local["error"] == {"type": "Unreadable", "message": "item 1: Unreadable", "step": "fan"}


WIDE = """
name: wide
input:
  type: object
  required: [items, log]
  properties:
    items: {type: array, items: {type: integer}}
    log: {type: string}
    fail_at: {type: integer, default: -1}
    flaky_at: {type: integer, default: -1}
    slow_at: {type: integer, default: -1}
state: {out: {type: array}, errors: {type: array}}
output: {out: $state.out, errors: $state.errors}
steps:
  - id: fan
    foreach: $input.items
    uses: ops.work
    with: {n: $item, log: $input.log, fail_at: $input.fail_at, flaky_at: $input.flaky_at, slow_at: $input.slow_at}
    mode: parallel
    retry: {attempts: 3, backoff: 0}
    timeout: 3
    on_item_error: collect
    save: state.out
    errors: state.errors
    next: end
"""


def test_items_in_chunks_keep_their_own_failures_retries_and_timeouts(cluster: Any, tmp_path: Path) -> None:
    """No concurrency limit: the items go in chunks (one task, several items). A failing item,
    a flaky one and one past its timeout each cost only themselves: their chunk-mates' results
    are kept, and every item's result is committed as its own row."""
    root = make_dask_project(tmp_path, cluster.scheduler_address)
    (root / "workflows" / "wide.yaml").write_text(WIDE.lstrip("\n"), encoding="utf-8")
    (root / "deployments" / "wide.yaml").write_text(
        f"name: wide.dask\nworkflow: wide\nexecutor: {{kind: dask, address: '{cluster.scheduler_address}'}}\n",
        encoding="utf-8")
    assert cli(root, "compile").code == 0
    seen: list[str] = []
    cluster.scheduler.add_plugin(_Seen(seen), name="wfops-test-chunks")
    items = list(range(60))
    try:
        run = wfops.Project(root).run("wide.dask", {"items": items, "log": str(tmp_path / "log.jsonl"),
                                                    "fail_at": 20, "flaky_at": 21, "slow_at": 40})
    finally:
        cluster.scheduler.remove_plugin(name="wfops-test-chunks")
    assert run.status == "completed", run.error
    assert run.output is not None
    assert [o["n"] for o in run.output["out"]] == [i * 10 for i in items if i != 20]
    assert run.output["errors"] == [{"index": 20, "type": "ValueError", "message": "bad item 20"}]
    assert len(seen) < len(items) - 10, f"{len(seen)} tasks for {len(items)} items: not chunked"
    trace = wfops.Project(root).trace(run.run_id)
    rows = [e for e in trace if e.kind == "item"]
    assert sorted(e.step for e in rows) == sorted(f"fan[{i}]" for i in items)  # one row per item
    # Every error each item was retried after (a loaded machine may also time out a retry).
    retried: dict[str, set[str]] = {}
    for e in trace:
        if e.kind == "retry" and e.error:
            retried.setdefault(e.step, set()).add(e.error["type"])
    assert "ValueError" in retried.get("fan[21]", set())  # flaky: failed once, then ran again
    assert "Timeout" in retried.get("fan[40]", set())  # past its timeout: failed, then ran again
    # Item 20 failed all its attempts; its retries are its own, not its chunk-mates'.
    assert [e.attempt for e in trace if e.step == "fan[20]"] == [1, 2, 3]
    work = read_log(tmp_path / "log.jsonl")
    assert all(sum(1 for e in work if e["n"] == i) == 1 for i in items if i not in (20, 21, 40) and
               not any(e.step == f"fan[{i}]" for e in trace if e.kind == "retry"))
