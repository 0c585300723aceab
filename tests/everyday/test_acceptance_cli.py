"""Acceptance: what a user sees at the terminal edges of the CLI."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env, run_cli


@pytest.mark.slow
def test_ctrl_c_during_a_run_cancels_it_cleanly_and_leaves_it_resumable(tmp_path: Path) -> None:
    write(tmp_path, {
        "sources.yaml": "sources: {}\n",
        "workflows/slow.yaml": "name: slow\nsteps:\n  - {id: a, uses: std.sleep, with: {seconds: 30}, next: end}\n",
        "deployments/slow.yaml": "name: slow.local\nworkflow: slow\n",
    })
    assert run_cli("compile", cwd=tmp_path).returncode == 0
    # A real process: the point is what SIGINT does to it.
    proc = subprocess.Popen([*WFOPS, "run", "slow.local"], cwd=tmp_path, env=process_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60  # a hang guard
    while not (tmp_path / ".wfops/wfops.db").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 6, err  # the run ended `cancelled`
    assert "cancelled" in out and "resume with: wfops resume " in out
    assert "Traceback" not in err
    listed = run_cli("runs", "list", "--status", "cancelled", "--json", cwd=tmp_path)
    assert '"status": "cancelled"' in listed.stdout  # recorded, resumable, not marked failed


@pytest.mark.slow  # starts its own MCP server process(es)
def test_caps_list_says_the_lock_holds_only_used_tools(tmp_path: Path) -> None:
    from tests.mcp.helpers import STATEFUL

    write(tmp_path, {
        "sources.yaml": f"""
            sources:
              used: {{kind: mcp, command: [python, {STATEFUL}]}}
              idle: {{kind: mcp, command: [python, {STATEFUL}]}}
            """,
        "workflows/w.yaml": "name: w\nsteps:\n  - {id: a, uses: used.counter, next: end}\n",
    })
    assert run_cli("compile", cwd=tmp_path).returncode == 0
    listed = run_cli("caps", "list", cwd=tmp_path)
    assert listed.returncode == 0
    assert "used.counter" in listed.stdout and "used.echo" not in listed.stdout  # the lock's view
    notes = [line for line in listed.stderr.splitlines() if line.startswith("note:")]
    assert any("used: only the tools workflows use" in n and "--source used" in n for n in notes)
    assert any("idle: MCP source not in wfops.lock (no workflow uses it yet)" in n for n in notes)
    assert not any("run `wfops compile`" in n for n in notes)  # compile would not add them


def test_the_printed_resume_command_is_safe_to_paste(tmp_path: Path) -> None:
    write(tmp_path, {
        "sources.yaml": "sources: {}\n",
        "workflows/ask.yaml": """
            name: ask
            steps:
              - {id: ask, interrupt: approval, request: {q: "ship?"}, on: {approved: end, rejected: no}}
              - {id: no, end: rejected}
            """,
        "deployments/ask.yaml": "name: ask.local\nworkflow: ask\n",
    })
    assert run_cli("compile", cwd=tmp_path).returncode == 0
    ran = run_cli("run", "ask.local", cwd=tmp_path)
    assert ran.returncode == 3
    run_id = ran.stdout.split()[1]
    shown = run_cli("runs", "show", run_id, cwd=tmp_path)
    for out in (ran.stdout, shown.stdout):
        command = next(line for line in out.splitlines() if f"wfops resume {run_id}" in line)
        assert "|" not in command  # `approved|rejected` would be a shell pipe
        assert "where OUTCOME is one of: approved, rejected" in out
