"""Durations out of range are usage errors (exit 2), never an overflow deep inside (exit 70):
`runs prune --older-than` with an age the calendar cannot hold (with a store and before
there is one), and a `WFOPS_DB_TIMEOUT` SQLite cannot wait for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.helpers import env_for, make_run_project, wfops


@pytest.mark.parametrize("age", ["1e400", "1e6", "739951000"])
def test_an_age_out_of_range_is_a_usage_error(tmp_path: Path, age: str) -> None:
    root = make_run_project(tmp_path / "p")
    before = wfops(root, "runs", "prune", "--older-than", age)
    assert before.returncode == 2, before.stderr  # no store yet
    assert wfops(root, "run", "chain.local").returncode == 0
    done = wfops(root, "runs", "prune", "--older-than", age)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("wfops: error: an age of ") and "days is out of range: give a number of days " \
        "from 0 to " in done.stderr and "Traceback" not in done.stderr
    kept = wfops(root, "runs", "prune", "--older-than", "0")
    assert kept.returncode == 0 and "pruned 1 finished run" in kept.stdout, kept.stdout + kept.stderr


@pytest.mark.parametrize("value", ["1e400", "nan", "-1", "86401", "soon"])
def test_a_store_timeout_out_of_range_is_a_usage_error(tmp_path: Path, value: str) -> None:
    root = make_run_project(tmp_path / "p")
    assert wfops(root, "run", "chain.local").returncode == 0  # the store exists: `runs list` opens it
    for args in (("run", "chain.local"), ("runs", "list")):
        done = wfops(root, *args, env=env_for(WFOPS_DB_TIMEOUT=value))
        assert done.returncode == 2, done.stderr
        assert f"wfops: error: WFOPS_DB_TIMEOUT={value!r} is not a number of seconds from 0 to 86,400" in done.stderr
        assert "internal error" not in done.stderr
    assert wfops(root, "run", "chain.local", env=env_for(WFOPS_DB_TIMEOUT="2.5")).returncode == 0
