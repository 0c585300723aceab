"""An embedding program's Project keeps one store connection across its runs and reads,
until `close()` or the end of a `with` block. Observed from outside: the file descriptors
this process holds on the store's database file (Linux `/proc/self/fd`), one per connection."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

import pytest

import wfops

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")


def connections(root: Path) -> int:
    """How many open descriptors of this process name the store's database file."""
    db = str((root / ".wfops" / "wfops.db").resolve())
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the descriptor listdir itself used, closed since
            count += os.readlink(f"/proc/self/fd/{fd}") == db
    return count


def test_runs_and_reads_share_one_connection_until_close(root: Path) -> None:
    project = wfops.Project(root)
    first = project.run("twice.local", input={"n": 1})
    assert connections(root) == 1  # kept open after the run
    second = project.run("twice.local", input={"n": 2})
    waiting = project.run("ask.local")
    assert project.resume(waiting.run_id, "approved", {"v": 1}).status == "completed"
    assert [r.output for r in (first, second)] == [{"doubled": 2}, {"doubled": 4}]
    assert len(project.runs()) == 3 and project.trace(first.run_id)
    assert connections(root) == 1  # the same one: none closed and reopened, none leaked
    project.close()
    assert connections(root) == 0
    assert project.run("twice.local", input={"n": 3}).output == {"doubled": 6}  # reopened on demand
    assert connections(root) == 1
    project.close()
    project.close()  # closing twice is harmless
    assert connections(root) == 0


def test_a_with_block_closes_the_connection(root: Path) -> None:
    with wfops.Project(root) as project:
        project.run("twice.local", input={"n": 1})
        assert connections(root) == 1
    assert connections(root) == 0


def test_a_project_that_never_ran_opens_no_store(root: Path) -> None:
    with wfops.Project(root) as project:
        assert project.validate().ok and project.runs() == []
    assert not (root / ".wfops" / "wfops.db").exists()


def test_a_run_in_another_thread_gets_its_own_connection(root: Path, released: list) -> None:
    # One connection cannot hold two runs' transactions: while one run has the kept store,
    # a run started from another thread opens (and then closes) a store of its own.
    project = wfops.Project(root)
    project.run("twice.local", input={"n": 1})  # the kept connection is open
    results: list = []
    driver = threading.Thread(target=lambda: results.append(project.run("hangs.local")), daemon=True)
    driver.start()
    node = None
    while driver.is_alive() and not (node is not None and node.STARTED.is_set()):
        node = sys.modules.get("calcops")
        threading.Event().wait(0.01)
    assert node is not None and node.STARTED.is_set()
    released.append(node.RELEASE)
    assert connections(root) == 1  # lent to the stuck run
    assert project.run("twice.local", input={"n": 5}).output == {"doubled": 10}
    driver.join(timeout=60)  # a guard against a hang, not a speed check
    assert not driver.is_alive() and results[0].status == "failed"
    # (SQLite keeps a closed connection's descriptor while another connection of the process
    # holds locks on the file, so the count in between says nothing here.)
    project.close()
    assert connections(root) == 0


def test_a_store_removed_between_runs_is_opened_again(root: Path) -> None:
    # The kept connection must not write into a file that is gone (`rm -rf .wfops`).
    with wfops.Project(root) as project:
        project.run("twice.local", input={"n": 1})
        for name in ("wfops.db", "wfops.db-wal", "wfops.db-shm"):
            (root / ".wfops" / name).unlink(missing_ok=True)
        second = project.run("twice.local", input={"n": 2})
        assert connections(root) == 1
    assert [r.run_id for r in wfops.Project(root).runs()] == [second.run_id]  # in the file that is there
