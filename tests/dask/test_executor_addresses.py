"""Validated means runnable: an executor address `wfops run` could not connect to (a port past
65535, a 300-character host, a protocol wfops does not speak) is a validate diagnostic, and a
usage error given as `--executor`, never an internal error. No cluster here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.dask.project import make_dask_project
from tests.runner.helpers import wfops

LONG = "a" * 300
BAD = [
    ("tcp://127.0.0.1:99999", "port '99999' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1:0", "port '0' is not a number from 1 to 65535"),
    (f"tcp://{LONG}:8786", "has a host of 300 characters; a host name has at most 253"),
    (f"tcp://{'b' * 64}.example:8786", "that is not a host name (each dot-separated label: 1 to 63 characters)"),
    ("tcp://sched.example", "has no port"),
    ("inproc://127.0.0.1/1/2", "wfops cannot connect to a Dask scheduler over `inproc://`"),
    ("ws://sched.example:8786", "wfops cannot connect to a Dask scheduler over `ws://`"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dask_project(tmp_path_factory.mktemp("addresses"))


@pytest.mark.parametrize(("address", "problem"), BAD)
def test_validate_reports_an_address_run_could_not_use(project: Path, address: str, problem: str) -> None:
    deployment = project / "deployments" / "bad.yaml"
    write(project, {"deployments/bad.yaml": f"name: bad\nworkflow: one\nexecutor: {{kind: dask, address: '{address}'}}\n"})
    try:
        done = wfops(project, "validate", "--format", "json")
        assert done.returncode == 1, done.stdout + done.stderr
        [found] = json.loads(done.stdout)["diagnostics"]
        assert (found["code"], found["file"], found["line"]) == ("invalid-executor-address", "deployments/bad.yaml", 3)
        assert problem in found["message"] and found["hint"], found
        ran = wfops(project, "run", "bad", "-i", "log=/dev/null")
        assert ran.returncode == 2, ran.stderr  # refused at the gate, not exit 70
        assert "error[invalid-executor-address]" in ran.stderr and "Traceback" not in ran.stderr
    finally:
        deployment.unlink()


@pytest.mark.parametrize(("address", "problem"), [(a, p) for a, p in BAD if a.startswith("tcp://")])
def test_a_bad_executor_option_is_a_usage_error(project: Path, address: str, problem: str) -> None:
    done = wfops(project, "run", "one.local", "-i", "log=/dev/null", "--executor", "dask://" + address[6:])
    assert done.returncode == 2, done.stderr
    assert problem in done.stderr and "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert json.loads(wfops(project, "runs", "list", "--json").stdout) == []  # nothing was stored


def test_good_addresses_validate(project: Path) -> None:
    for address in ("tcp://10.1.2.3:8786", "tls://sched.example:8786", "tcp://[::1]:8786"):
        write(project, {"deployments/good.yaml": f"name: good\nworkflow: one\nexecutor: {{kind: dask, address: '{address}'}}\n"})
        done = wfops(project, "validate")
        assert done.returncode == 0, done.stdout
    (project / "deployments" / "good.yaml").unlink()
