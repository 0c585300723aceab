"""A SQLite store on a read-only medium (a read-only mount, a snapshot, a copy on a CD): the
run history can still be read, and a write says plainly that the store is read-only.

The medium is real: `.wfops/` bind-mounted read-only in a private mount namespace of the
`wfops` process (`unshare --mount`; the mount ends with the process). chmod would not do:
CI runs as root, whom permission bits do not stop."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.harness import WFOPS, process_env
from tests.runner.helpers import as_json, env_for, make_run_project, wfops

# Root may mount in a new mount namespace; anyone else needs a user namespace too.
UNSHARE = ["unshare", "--mount", *([] if os.geteuid() == 0 else ["--map-root-user"])]


def _can_mount() -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = subprocess.run([*UNSHARE, "sh", "-c", 'mount --bind -o ro "$0" "$0"', "/tmp"],
                           capture_output=True, check=False)
    return probe.returncode == 0


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not _can_mount(), reason="needs unshare and mount, and the right to mount "
                                                          "in a private mount namespace")]


def read_only(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`wfops ARGS --project ROOT` with ROOT/.wfops mounted read-only for that process alone."""
    state = root / ".wfops"
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    return subprocess.run([*UNSHARE, "sh", "-c", script, str(state), *WFOPS, *args, "--project", str(root)],
                          capture_output=True, text=True, cwd=root, env=process_env(env_for()), timeout=120)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = make_run_project(tmp_path_factory.mktemp("read-only-store"))
    done = wfops(root, "run", "chain.local", "--json")
    assert done.returncode == 0, done.stderr
    run_id = str(as_json(done)["run_id"])  # type: ignore[index]
    # Closed cleanly: no -wal or -shm file beside the store, which a read-only medium could
    # not get either (SQLite reads a WAL database without them only when told it is immutable).
    assert sorted(p.name for p in (root / ".wfops").iterdir() if p.name.startswith("wfops.db")) == ["wfops.db"]
    return root, run_id


def test_runs_list_and_show_read_a_store_on_a_read_only_medium(project: tuple[Path, str]) -> None:
    root, run_id = project
    listed = read_only(root, "runs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in as_json(listed)] == [run_id]  # type: ignore[union-attr]
    shown = read_only(root, "runs", "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    assert as_json(shown)["status"] == "completed"  # type: ignore[index]
    traced = read_only(root, "runs", "trace", run_id, "--json")
    assert traced.returncode == 0, traced.stderr
    assert [e["step"] for e in as_json(traced)] == [f"s{i}" for i in range(1, 7)]  # type: ignore[union-attr]


def test_a_run_on_a_read_only_medium_is_refused_as_a_read_only_store(project: tuple[Path, str]) -> None:
    root, _ = project
    done = read_only(root, "run", "chain.local")
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"store {root / '.wfops/wfops.db'} is read-only" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "missing directory or no permission" not in done.stderr
    # Nothing was written: the history is what it was.
    assert len(as_json(wfops(root, "runs", "list", "--json"))) == 1  # type: ignore[arg-type]


def test_commits_still_in_the_write_ahead_log_are_read_too(tmp_path: Path) -> None:
    root = make_run_project(tmp_path / "p")
    assert wfops(root, "run", "chain.local").returncode == 0
    db = root / ".wfops/wfops.db"
    # A read transaction left open keeps the next run's commits in the -wal file (no
    # checkpoint may move them past its snapshot), as a writer that crashed would leave them.
    # With the -shm file there, SQLite reads the log on a read-only medium by itself; the
    # `immutable` fallback, which would not see the log, must not be taken.
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN")
        holder.execute("SELECT count(*) FROM runs").fetchone()
        assert wfops(root, "run", "chain.local").returncode == 0
        assert (root / ".wfops/wfops.db-wal").stat().st_size > 0
        listed = read_only(root, "runs", "list", "--json")
    finally:
        holder.close()
    assert listed.returncode == 0, listed.stderr
    assert len(as_json(listed)) == 2  # type: ignore[arg-type]  # the second run lives in the log
