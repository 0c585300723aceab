"""Command sources on a LocalCluster: each call runs on a worker process, which builds the
source from its declaration and refuses a script that is not the locked one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import distributed
import pytest

from tests.conftest import write
from tests.runner.helpers import as_json
from tests.runner.helpers import wfops as cli

pytestmark = pytest.mark.slow

WHO = "import json, os, sys\nprint(json.dumps({'pid': os.getppid(), 'n': int(sys.argv[1]) * 10}))\n"
SOURCES = """\
sources:
  scripts:
    kind: command
    capabilities:
      who:
        argv: [python, scripts/who.py, "{n}"]
        input: {type: object, required: [n], properties: {n: {type: integer}}}
        output: {type: object, required: [pid, n], properties: {pid: {type: integer}, n: {type: integer}}}
        stdout: json
"""
FAN = """\
name: fan
version: 1
input: {type: object, required: [items], properties: {items: {type: array, items: {type: integer}}}}
state:
  out: {type: array}
output: {out: $state.out}
steps:
  - id: fan
    foreach: $input.items
    concurrency: 4
    uses: scripts.who
    with: {n: $item}
    save: state.out
    next: end
"""


def project(root: Path, address: str) -> Path:
    write(root, {"sources.yaml": SOURCES, "scripts/who.py": WHO, "workflows/fan.yaml": FAN,
                 "deployments/fan.yaml": f"name: fan.dask\nworkflow: fan\nexecutor: {{kind: dask, address: '{address}'}}\n"})
    done = cli(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_command_calls_run_on_the_workers(cluster: Any, tmp_path: Path) -> None:
    root = project(tmp_path, cluster.scheduler_address)
    done = cli(root, "run", "fan.dask", "--json", "-i", f"items={json.dumps([1, 2, 3])}")
    assert done.returncode == 0, done.stderr
    out = as_json(done)["output"]["out"]
    assert [o["n"] for o in out] == [10, 20, 30]
    pids = {o["pid"] for o in out}  # the program's parent: the worker process that ran it
    assert os.getpid() not in pids and pids <= {nanny.pid for nanny in cluster.workers.values()}


def test_a_worker_refuses_a_script_that_is_not_the_locked_one(cluster: Any, tmp_path: Path) -> None:
    root = project(tmp_path / "driver", cluster.scheduler_address)
    # The workers read the project from WFOPS_PROJECT when it is set: theirs holds another script.
    worker_root = tmp_path / "worker"
    write(worker_root, {"sources.yaml": SOURCES, "scripts/who.py": WHO + "# another version\n"})
    client_env = {"WFOPS_PROJECT": str(worker_root)}

    def set_env(values: dict[str, str]) -> None:
        os.environ.update(values)

    with distributed.Client(cluster.scheduler_address) as client:
        client.run(set_env, client_env)
        try:
            done = cli(root, "run", "fan.dask", "--json", "-i", "items=[1]")
        finally:
            client.run(lambda: os.environ.pop("WFOPS_PROJECT", None))
    run = as_json(done)
    assert done.returncode == 1 and run["error"]["type"] == "capability-drift", run
    assert "does not match the run's lock" in run["error"]["message"]
