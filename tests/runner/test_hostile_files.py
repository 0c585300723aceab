"""Files wfops writes and reads past the loader: atomic writes that never follow a planted
symlink, python modules resolved the way Python imports them, an MCP `cwd:` kept in the
project, a deeply nested lock, and a full disk at the run lock (exit 4, the commit's words)."""

from __future__ import annotations

import json
import resource
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env
from tests.runner.helpers import env_for, make_run_project, wfops
from tests.runner.hostile import assert_store_sound
from wfops.lockfile import LOCK_NAME

HELLO = """
name: hello
steps:
  - {id: hi, uses: std.echo, with: {value: hi}, next: end}
"""


def small_project(root: Path, **extra: str) -> Path:
    return write(root, {"sources.yaml": "sources: {}\n", "workflows/hello.yaml": HELLO,
                        "deployments/hello.yaml": "name: hello.local\nworkflow: hello\n", **extra})


def test_files_are_written_without_following_a_symlink_at_the_temporary_path(tmp_path: Path) -> None:
    root = small_project(tmp_path / "p")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    # The names a writer could have used for its temporary file, each a link to the victim.
    planted = (f"{LOCK_NAME}.tmp", f".{LOCK_NAME}.tmp", ".wfops/cache/validate.json.tmp")
    for name in planted:
        link = root / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(victim)
    out = tmp_path / "artifacts"
    out.mkdir()
    (out / "hello.json.tmp").symlink_to(victim)
    done = wfops(root, "compile", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"
    assert json.loads((root / LOCK_NAME).read_text())["workflows"]["hello"]
    assert json.loads((out / "hello.json").read_text())["name"] == "hello"
    # A link AT the lock path is replaced by the new lock, never written through.
    (root / LOCK_NAME).unlink()
    (root / LOCK_NAME).symlink_to(victim)
    assert wfops(root, "compile").returncode == 0
    assert victim.read_text() == "precious\n" and not (root / LOCK_NAME).is_symlink()
    assert not [p.name for p in root.iterdir()  # no temp file of its own left behind
                if p.name.startswith(f".{LOCK_NAME}.") and p.name not in planted]


def test_the_run_lock_never_truncates_the_target_of_a_planted_symlink(tmp_path: Path) -> None:
    root = make_run_project(tmp_path / "p")
    started = wfops(root, "run", "approval.local", "--json")
    run_id = started.json()["run_id"]
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (root / ".wfops" / "locks").mkdir(exist_ok=True)
    (root / ".wfops" / "locks" / f"{run_id}.lock").symlink_to(victim)
    done = wfops(root, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ann"}')
    assert done.returncode == 4 and "is a symlink" in done.stderr, done.stderr
    assert victim.read_text() == "precious\n"


def test_a_package_beside_a_module_of_the_same_name_is_resolved_as_python_would(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    outside = write(tmp_path / "outside", {"ops/__init__.py": f"open({str(marker)!r}, 'w').write('ran')\n"})
    root = small_project(tmp_path / "p", **{
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": "import wfops\n",  # what a reviewer sees; Python would import the package instead
    })
    (root / "ops").symlink_to(outside / "ops")
    for verb in ("validate", "compile"):
        done = wfops(root, verb)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "module 'ops' resolves to" in done.stdout and "outside the project" in done.stdout
    assert not marker.exists()  # refused before any of its code ran


@pytest.mark.parametrize("cwd", ["../elsewhere", "/tmp", "servers/../../elsewhere"])
def test_an_mcp_cwd_that_leaves_the_project_is_a_diagnostic(tmp_path: Path, cwd: str) -> None:
    root = small_project(tmp_path / "p", **{
        "sources.yaml": f"sources:\n  far: {{kind: mcp, command: [python, -c, 'pass'], cwd: '{cwd}'}}\n"})
    done = wfops(root, "validate")
    assert done.returncode == 1 and "error[invalid-source]" in done.stdout and "leaves the project" in done.stdout


@pytest.mark.slow
def test_an_mcp_cwd_linked_outside_the_project_is_refused_when_the_server_starts(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = small_project(tmp_path / "p", **{
        "sources.yaml": "sources:\n  far: {kind: mcp, command: [python, -c, 'pass'], cwd: linked}\n"})
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    done = wfops(root, "caps", "list", "--source", "far")
    assert done.returncode != 0 and "is outside the project" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_deeply_nested_lock_is_a_diagnostic(tmp_path: Path) -> None:
    root = small_project(tmp_path / "p")
    for depth in (300, 100_000):
        (root / LOCK_NAME).write_text('{"version": 1, "x": ' + "[" * depth + "]" * depth + "}\n")
        done = wfops(root, "check")
        assert done.returncode == 1, done.stderr
        assert "error[corrupt-lock]" in done.stdout and "nested" in done.stdout
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def _fsize_limit(limit: int):
    def apply() -> None:  # in the child, before exec: ignored signals stay ignored across exec
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.slow
def test_a_full_disk_at_the_run_lock_is_a_store_error_with_the_commits_message(tmp_path: Path) -> None:
    """RLIMIT_FSIZE 0 makes every write fail with EFBIG, as a full disk fails with ENOSPC:
    no privileges needed. A connection held open keeps SQLite's shared-memory
    file at its size, so reading the store needs no write and the lock file is the first."""
    root = make_run_project(tmp_path / "p")
    db = root / ".wfops" / "wfops.db"
    run_id = wfops(root, "run", "approval.local", "--json").json()["run_id"]
    holder = sqlite3.connect(db)
    holder.execute("SELECT count(*) FROM runs").fetchone()
    try:
        done = subprocess.run([*WFOPS, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ann"}',
                               "--project", str(root)], capture_output=True, text=True, cwd=root,
                              env=process_env(env_for()), preexec_fn=_fsize_limit(0), timeout=120)
    finally:
        holder.close()
    assert done.returncode == 4, done.stderr
    assert f"run {run_id}: store {db}: disk full while trying to take the run lock; nothing after the last " \
           "committed step was lost" in done.stderr
    assert f"free disk space, then `wfops resume {run_id}` continues the run" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert assert_store_sound(db) == ["interrupted"]
    done = wfops(root, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ann"}')
    assert done.returncode == 0, done.stderr  # with space again, the run goes on


@pytest.mark.slow
def test_a_full_disk_writing_the_lock_file_is_a_store_error(tmp_path: Path) -> None:
    root = small_project(tmp_path / "p")
    done = subprocess.run([*WFOPS, "compile", "--project", str(root)], capture_output=True, text=True, cwd=root,
                          env=process_env(env_for()), preexec_fn=_fsize_limit(0), timeout=120)
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"{LOCK_NAME}: disk full while trying to write it" in done.stderr
    assert not (root / LOCK_NAME).exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
