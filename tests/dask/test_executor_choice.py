"""Choosing an executor, and refusing one that cannot work, before anything runs or is stored.
No cluster here: these are the fast checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import wfops
from tests.conftest import write
from tests.dask.project import OPS, drifted, free_port, make_dask_project, read_log
from tests.runner.helpers import as_json
from tests.runner.helpers import wfops as cli
from wfops.errors import RefusedError, UsageError
from wfops.loader.project import load_project
from wfops.sources.dask_executor import MAX_CHUNK, chunk_size
from wfops.sources.dask_worker import call_on_worker
from wfops.sources.executor import ExecutorChoice
from wfops.sources.registry import load_python_source


@pytest.mark.parametrize(("text", "address", "name"), [
    ("local", None, "local"),
    ("dask://10.1.2.3:8786", "tcp://10.1.2.3:8786", "dask://10.1.2.3:8786"),
    ("dask+tls://sched.example:8786", "tls://sched.example:8786", "dask+tls://sched.example:8786"),
])
def test_executor_names_parse_and_round_trip(text: str, address: str | None, name: str) -> None:
    choice = ExecutorChoice.parse(text)
    assert choice.address == address
    assert choice.name == name
    assert ExecutorChoice.parse(choice.name) == choice  # a resumed run reads back what its start recorded


@pytest.mark.parametrize("text", ["dask", "dask://", "tcp://h:1", "ray://h:1", "dask://a b"])
def test_unknown_executors_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        ExecutorChoice.parse(text)


@pytest.mark.parametrize(("executor", "code", "column", "message"), [
    ("{kind: dask}", "missing-key", 11, "`address` is required in `executor`"),
    ("{kind: dask, address: 'foo'}", "invalid-value", 33, '`executor.address`: "foo" is not a valid value'),
    ("{kind: k8s}", "invalid-value", 18, '`executor`: unknown kind "k8s"; expected "local", "dask"'),
    ("{kind: local, address: 'tcp://a:1'}", "unknown-key", 25, "unknown key `address` in `executor`"),
])
def test_deployment_executor_errors_are_diagnostics(make_project, executor: str, code: str, column: int,
                                                     message: str) -> None:
    root = make_project({"deployments/d.yaml": f"name: d\nworkflow: w\nexecutor: {executor}\n"})
    found = [(d.code, d.line, d.column, d.message) for d in load_project(root).diagnostics]
    assert found == [(code, 3, column, message)]


def test_an_unreachable_cluster_refuses_the_run_naming_the_address(tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    root = make_dask_project(tmp_path, address)
    log = tmp_path / "log.jsonl"
    done = cli(root, "run", "fan.dask", "-i", "items=[1]", "-i", f"log={log}")
    assert done.code == 2
    assert f"cannot reach the Dask scheduler at {address}" in done.stderr
    assert "Traceback" not in done.stderr
    # --executor overrides the deployment, with the same refusal
    other = f"127.0.0.1:{free_port()}"
    done = cli(root, "run", "fan.local", "--executor", f"dask://{other}", "-i", "items=[1]", "-i", f"log={log}")
    assert done.code == 2
    assert f"tcp://{other}" in done.stderr
    assert wfops.Project(root).runs() == []  # refused at start: nothing stored
    assert not log.exists()


def test_a_bad_executor_flag_is_a_usage_error(tmp_path: Path) -> None:
    root = make_dask_project(tmp_path)
    done = cli(root, "run", "fan.local", "--executor", "bogus", "-i", "items=[1]", "-i", "log=x")
    assert done.code == 2
    assert "executor 'bogus' is not one wfops knows" in done.stderr


def test_executor_local_overrides_a_dask_deployment(tmp_path: Path) -> None:
    root = make_dask_project(tmp_path, f"tcp://127.0.0.1:{free_port()}")  # nobody listens there
    log = tmp_path / "log.jsonl"
    done = cli(root, "run", "fan.dask", "--json", "--executor", "local", "-i", "items=[1,2]", "-i", f"log={log}")
    assert done.code == 0, done.stderr
    assert {e["pid"] for e in read_log(log)} == {os.getpid()}
    assert [o["n"] for o in as_json(done)["output"]["out"]] == [10, 20]


# -- the worker's side, called in this process (what a Dask worker calls) -------------------

def _context() -> dict:
    return {"run_id": "r1", "workflow": "fan", "deployment": "fan.dask", "step": "fan[3]", "attempt": 2,
            "idempotency_key": "r1:fan#1[3]", "extra": {}}


def _locked_hash(root: Path) -> str:
    return load_python_source(root, "ops", "ops").capabilities()["work"].contract_hash


def test_a_worker_runs_the_locked_code_with_the_context_unchanged(tmp_path: Path) -> None:
    root = make_dask_project(tmp_path / "p")
    log = tmp_path / "log.jsonl"
    record = call_on_worker(str(root), "ops", "ops", "work", _locked_hash(root), {"n": 3, "log": str(log)},
                            _context())
    seconds = record.pop("seconds")  # the call's time, which sizes the driver's chunks
    assert isinstance(seconds, float) and seconds >= 0
    assert record == {"outcome": "ok", "output": {"n": 30, "pid": os.getpid(), "key": "r1:fan#1[3]"}}
    assert read_log(log)[0]["attempt"] == 2


def test_a_worker_with_other_code_refuses_and_never_runs_it(tmp_path: Path, monkeypatch) -> None:
    locked = make_dask_project(tmp_path / "locked")
    stale = write(tmp_path / "stale", {"ops.py": drifted(OPS), "sources.yaml": "sources: {}\n"})
    monkeypatch.setenv("WFOPS_PROJECT", str(stale))  # the worker's own copy of the project
    log = tmp_path / "log.jsonl"
    record = call_on_worker(str(locked), "ops", "ops", "work", _locked_hash(locked), {"n": 1, "log": str(log)},
                            _context())
    assert record["error"]["type"] == "capability-drift"
    assert "ops.work on worker" in record["error"]["message"]
    assert not log.exists()


def test_a_worker_without_the_project_says_how_to_give_it(tmp_path: Path) -> None:
    record = call_on_worker(str(tmp_path / "nowhere"), "ops", "ops", "work", "x" * 64, {}, _context())
    assert record["error"]["type"] == "WfopsError"
    assert "set WFOPS_PROJECT" in record["error"]["message"]


def test_a_failing_node_on_a_worker_is_a_record_with_its_type_and_message(tmp_path: Path) -> None:
    root = make_dask_project(tmp_path / "p")
    payload = {"n": 2, "fail_at": 2, "log": str(tmp_path / "log.jsonl")}
    record = call_on_worker(str(root), "ops", "ops", "work", _locked_hash(root), payload, _context())
    assert record == {"error": {"type": "ValueError", "message": "bad item 2"}}
    bad_input = call_on_worker(str(root), "ops", "ops", "work", _locked_hash(root), {"n": "x"}, _context())
    assert bad_input["error"]["type"] == "InvalidInput"  # never retried


def test_the_api_takes_the_executor_as_the_cli_does(tmp_path: Path) -> None:
    root = make_dask_project(tmp_path / "p")
    project = wfops.Project(root)
    with pytest.raises(UsageError, match="executor 'tcp://h:1' is not one wfops knows"):
        project.run("fan.local", {"items": [1], "log": "x"}, executor="tcp://h:1")
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(RefusedError, match=f"cannot reach the Dask scheduler at tcp://{address}"):
        project.run("fan.local", {"items": [1], "log": "x"}, executor=f"dask://{address}")
    log = tmp_path / "log.jsonl"
    run = project.run("fan.local", {"items": [3], "log": str(log)}, executor="local")
    assert run.status == "completed" and run.output == {"out": [{"n": 30, "pid": os.getpid(), "key": f"{run.run_id}:fan#1[0]"}]}


def test_the_chunk_size_rule() -> None:
    # 996 calls of 50 µs on 4 threads: 4 chunks per thread, not the 1,000 the time would allow.
    assert chunk_size(996, 4, 0.00005) == 63
    # Calls of 10 ms: five fit in the 50 ms a chunk should take.
    assert chunk_size(1000, 4, 0.01) == 5
    # A call past the budget, or few calls: one per task.
    assert chunk_size(1000, 4, 0.1) == chunk_size(3, 4, 0.0) == chunk_size(1, 1, 0.0) == 1
    assert chunk_size(10 ** 6, 1, 0.0) == MAX_CHUNK
