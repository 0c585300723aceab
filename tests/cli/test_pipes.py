"""A run whose reader goes away (`| head -1`) keeps going to its end: output to the closed
pipe is dropped, the run is committed, and the exit code is the run's."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.cli.loop_project import write_loop_project
from tests.harness import WFOPS, process_env, run_cli


def _through_head(root: Path, deployment: str) -> int:
    # Through a real shell: both streams into `head -1`, which exits after one line while
    # the run still prints progress and node output; PIPESTATUS holds wfops's own exit code.
    script = f"{shlex.join([*WFOPS, 'run', deployment])} 2>&1 | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], cwd=root, env=process_env(), capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr + done.stdout
    return done.returncode


@pytest.mark.slow
def test_a_run_piped_into_head_runs_to_its_end(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=40)
    assert _through_head(root, "loop.local") == 0
    listed = run_cli("runs", "list", "--json", cwd=root).json()
    assert [(r["status"], r["steps"]) for r in listed] == [("completed", 41)]


@pytest.mark.slow
def test_a_failing_run_piped_into_head_exits_1(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=30)
    deployment = root / "deployments" / "loop.local.yaml"
    deployment.write_text(deployment.read_text().replace("[1, 2,", "[1, 2, -3,"))
    assert run_cli("compile", cwd=root).code == 0
    assert _through_head(root, "loop.local") == 1
    assert [r["status"] for r in run_cli("runs", "list", "--json", cwd=root).json()] == ["failed"]
