"""Progress on stderr: plain lines when piped; on a real terminal (a pseudo-terminal here)
finished lines that stay, a live foreach count with rate and ETA, a start-up notice, and
no colour under NO_COLOR."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.loop_project import write_loop_project
from tests.harness import WFOPS, process_env, run_cli
from wfops.cli.progress import Running

SGR = re.compile(r"\x1b\[[0-9;]*m")


def _on_a_terminal(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`wfops ARGS` with stderr on a pseudo-terminal, stdout on a pipe."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*WFOPS, *args], cwd=root, env=process_env({"COLUMNS": "120", **(env or {})}),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    code = proc.wait(timeout=60)
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


def _screen(raw: str) -> list[str]:
    """The lines left on screen at the end: each line's text after its last erase."""
    lines = []
    for line in SGR.sub("", raw).replace("\r\n", "\n").split("\n"):
        text = re.split(r"\x1b\[2K|\r", line)[-1]
        text = re.sub(r"\x1b\[\??[0-9;]*[A-Za-z]", "", text)
        if text.strip():
            lines.append(text)
    return lines


def test_piped_progress_is_one_plain_line_per_step(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=2)
    done = run_cli("run", "loop.local", cwd=root)
    steps = [line for line in done.stderr.splitlines() if line.startswith("  #")]
    assert [line.split(" (")[0] for line in steps] == ["  #1 each[0] [item] ok", "  #2 each[1] [item] ok",
                                                       "  #3 each [foreach] ok -> end"]
    assert "\x1b" not in done.stderr


def test_a_foreach_line_counts_rate_and_eta() -> None:
    step = Running("each", "foreach", since=time.monotonic() - 2.0, total=10, done=4, failed=1)
    shown = step.line(step.since + 2.0)
    assert shown == "each [foreach] 4/10  1 failed  2.0/s  ETA 3s  2.0s"
    resumed = Running("each", "foreach", since=0.0, total=200, done=150, done_at_start=100)
    assert resumed.line(10.0) == "each [foreach] 150/200  5.0/s  ETA 10s  10.0s"
    assert Running("fetch", "call", since=0.0).line(1.25) == "fetch [call] 1.2s"


@pytest.mark.slow
def test_on_a_terminal_finished_lines_stay_and_the_foreach_counts(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1, compile_it=False)
    (root / "deployments" / "loop.local.yaml").write_text(
        "name: loop.local\nworkflow: loop\nbindings: {ops: ops}\ninput: {items: [1, 2, -3, 4, 5, 6]}\n"
        "\n")
    workflow = root / "workflows" / "loop.yaml"
    workflow.write_text(workflow.read_text().replace("    save: state.done\n",
                                                     "    save: state.done\n    on_item_error: collect\n"))
    assert run_cli("compile", cwd=root).code == 0
    code, out, raw = _on_a_terminal(root, "run", "loop.local", env={"LOOP_ITEM_SLEEP": "0.3"})
    assert code == 0, raw
    assert "completed" in out
    assert re.search(r"each \[foreach\] [1-5]/6  1 failed  [0-9.]+/s  ETA \d+s", SGR.sub("", raw)), raw
    screen = _screen(raw)
    # What stays: node output, the failed item, the foreach's own line; no live region left.
    assert any(line.startswith("  #3 each[2] [item] error ValueError: negative item -3") for line in screen)
    assert screen[-1].startswith("  #7 each [foreach] ok -> end")
    assert not any("[foreach] " in line and "/6" in line for line in screen)
    assert "working on 6" in screen
    assert SGR.search(raw)  # dim live region by default


@pytest.mark.slow
def test_a_slow_start_says_what_it_waits_for_and_no_color_means_none(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1)
    code, _out, raw = _on_a_terminal(root, "run", "loop.local", env={"LOOP_IMPORT_SLEEP": "1.6", "NO_COLOR": "1"})
    assert code == 0, raw
    assert "waiting for the run to start (its checks, then its sources)... 1s" in raw
    assert not SGR.search(raw), repr(raw[:400])


@pytest.mark.slow
def test_a_slow_compile_says_what_it_waits_for_on_a_terminal(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1, compile_it=False)
    code, _out, raw = _on_a_terminal(root, "compile", env={"LOOP_IMPORT_SLEEP": "1.6"})
    assert code == 0, raw
    assert "waiting for the checks and the MCP servers the workflows call" in raw
    piped = run_cli("compile", cwd=root, env={"LOOP_IMPORT_SLEEP": "1.2"})
    assert piped.code == 0 and "waiting for" not in piped.stderr
