"""Acceptance: what a user sees at the terminal edges of the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, write


def test_ctrl_c_during_a_run_says_interrupted_and_leaves_it_resumable(tmp_path: Path) -> None:
    write(tmp_path, {
        "sources.yaml": "sources: {}\n",
        "workflows/slow.yaml": "name: slow\nsteps:\n  - {id: a, uses: std.sleep, with: {seconds: 30}, next: end}\n",
        "deployments/slow.yaml": "name: slow.local\nworkflow: slow\n",
    })
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("WFOPS_DB", None)
    wfops = [sys.executable, "-m", "wfops"]
    assert subprocess.run([*wfops, "compile"], cwd=tmp_path, env=env, capture_output=True).returncode == 0
    proc = subprocess.Popen([*wfops, "run", "slow.local"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    while not (tmp_path / ".wfops/wfops.db").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "wfops: interrupted"
    assert "Traceback" not in err
    listed = subprocess.run([*wfops, "runs", "list", "--status", "running", "--json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert '"status": "running"' in listed.stdout  # left resumable, not marked failed
