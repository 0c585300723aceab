"""Shared helpers for the MCP tests: real server processes, one event loop per session."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from wfops.model.sources import McpSource
from wfops.sources.base import StepContext
from wfops.sources.mcp import McpClientSource

SERVERS = Path(__file__).resolve().parent / "servers"
STATEFUL = str(SERVERS / "stateful.py")


def ctx(step: str = "s", attempt: int = 1) -> StepContext:
    return StepContext("run-1", "wf", None, step, attempt, f"run-1/{step}")


def stateful_source(root: Path, *args: str, timeout: float = 30, env: dict[str, str] | None = None,
                    cwd: str | None = None, start_timeout: float | None = None,
                    source_id: str = "t") -> McpClientSource:
    spec = McpSource(kind="mcp", command=["python", STATEFUL, *args], timeout=timeout,
                     env=env or {}, cwd=cwd)
    return McpClientSource(source_id, spec, root, start_timeout=start_timeout)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes (our children are reaped).
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped since kill(0): opening or reading its stat fails
        return False


def wait_dead(pid: int, seconds: float = 60) -> bool:
    """True once `pid` is gone; False only if it outlives a generous hang guard."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def wait_gone(marker: str, seconds: float = 60) -> list[int]:
    """The processes mentioning `marker` once none are left, or when the hang guard ends."""
    deadline = time.monotonic() + seconds
    while (found := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def processes_mentioning(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains `marker`, e.g. a unique temp path."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def read_pid(path: Path) -> int:
    return int(path.read_text())


class Loop:
    """One event loop kept across tests, so one server session serves a whole module."""

    def __init__(self) -> None:
        self.runner = asyncio.Runner()

    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    def close(self) -> None:
        self.runner.close()


PYTHON = sys.executable
