"""Conditional parallel branches across a real SIGKILL: the skipped branch is recorded once and
never runs, the taken ones resume without re-committing finished steps, and the join waits for
exactly the branches that ran."""

from __future__ import annotations

import signal
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import wait_for
from tests.runner.helpers import OPS, as_json, env_for, read_log, spawn, wfops

pytestmark = pytest.mark.slow

NOTIFY = """
name: notify
input: {type: object, properties: {notify: {type: boolean}}}
state:
  seen: {type: array, reducer: append, default: []}
output: {seen: $state.seen}
steps:
  - id: par
    parallel:
      fast:
        - {id: f1, uses: ops.tick, with: {n: 1}, save: {n: state.seen}, next: end}
      slow:
        - {id: s1, uses: ops.tick, with: {n: 3}, save: {n: state.seen}, next: end}
      notify:
        - {id: n1, uses: ops.tick, with: {n: 5}, save: {n: state.seen}, next: end}
    when: {notify: {eq: [$input.notify, true]}}
    next: end
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("when")
    write(root, {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS,
                 "workflows/notify.yaml": NOTIFY,
                 "deployments/quiet.yaml": "name: quiet.local\nworkflow: notify\ninput: {notify: false}\n",
                 "deployments/loud.yaml": "name: loud.local\nworkflow: notify\ninput: {notify: true}\n"})
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def committed(project: Path, run_id: str | None = None) -> list[tuple[str, str, str | None]]:
    conn = sqlite3.connect(project / ".wfops" / "wfops.db")
    try:
        if run_id is None:
            return conn.execute("SELECT run_id, step, kind FROM trace ORDER BY seq").fetchall()
        return conn.execute("SELECT step, kind, outcome FROM trace WHERE run_id=? ORDER BY seq", (run_id,)).fetchall()
    finally:
        conn.close()


def test_a_skipped_branch_survives_a_sigkill_and_the_join_waits_for_the_taken_ones(project: Path,
                                                                                   tmp_path: Path) -> None:
    log, ready = tmp_path / "effects.log", tmp_path / "ready"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_PAUSE_AT="3", WFOPS_TEST_READY=str(ready))
    proc = spawn(project, "run", "quiet.local", "--json", env=env)
    try:
        wait_for(ready.exists, what="the slow branch to start")
        # The fast branch finishes while the slow one hangs in its node.
        wait_for(lambda: any(step == "par/fast/f1" for _, step, _ in committed(project)), what="the fast branch")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    [run_id] = {rid for rid, step, _ in committed(project) if step == "par/fast/f1"}
    before = committed(project, run_id)
    assert ("par/notify", "skipped", "skipped") in before and ("par", "parallel", "ok") not in before

    done = wfops(project, "resume", run_id, "--json", env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"seen": [2, 4]}  # fast then slow; notify never ran
    steps = Counter(step for step, _, _ in committed(project, run_id))
    assert steps == Counter({"par/notify": 1, "par/fast/f1": 1, "par/slow/s1": 1, "par": 1})
    trace = as_json(wfops(project, "runs", "trace", run_id, "--json"))
    assert trace[-1]["output"] == {"fast": "ok", "notify": "skipped", "slow": "ok"}
    ran = Counter(e["step"] for e in read_log(log))
    assert ran == Counter({"par/fast/f1": 1, "par/slow/s1": 2})  # the in-flight node ran again; n1 never


def test_a_taken_branch_runs_and_joins_in_name_order(project: Path) -> None:
    done = wfops(project, "run", "loud.local", "--json")
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"seen": [2, 6, 4]}  # fast, notify, slow
