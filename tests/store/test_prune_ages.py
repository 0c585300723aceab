"""`runs prune --older-than` with an age the calendar cannot hold is a usage error (exit 2),
with a store and before there is one; never an overflow inside datetime (exit 70)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.helpers import make_run_project, wfops


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
