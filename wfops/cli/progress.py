"""Progress on stderr while a run goes.

Piped (not a terminal): one plain line per committed step, nothing else, as scripts and
logs want it. On a terminal, with `rich`: each finished step's line stays on screen, and a
live region below shows each running step with its elapsed time, a foreach as `done/total`
with its failures, rate and time left, and, when nothing has started after a second, what
the run waits for. `NO_COLOR` turns colour off (rich reads it).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from wfops.api import TraceEntry
from wfops.report.trace import describe

STARTUP_NOTICE_S = 1.0  # a start-up shorter than this says nothing


@dataclass
class Running:
    """A step that has started and not yet committed its entry."""

    path: str
    kind: str
    since: float
    total: int | None = None
    done: int = 0
    failed: int = 0
    done_at_start: int = 0  # items a resumed foreach had finished already (not in the rate)

    def line(self, now: float) -> str:
        elapsed = now - self.since
        if self.total is None:
            return f"{self.path} [{self.kind}] {elapsed:.1f}s"
        parts = [f"{self.path} [{self.kind}] {self.done}/{self.total}"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        fresh = self.done - self.done_at_start
        if fresh and elapsed > 0:
            rate = fresh / elapsed
            parts.append(f"{rate:.1f}/s")
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        parts.append(f"{elapsed:.1f}s")
        return "  ".join(parts)


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressPrinter:
    """The run's `on_step` (with `step_started`); `done()` when the run returns."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None,
                 waiting_for: str = "the run to start (its checks, then its sources)") -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.waiting_for = waiting_for
        self.started = time.monotonic()
        self.running: dict[str, Running] = {}
        self.lock = threading.Lock()
        self.any_step = False
        self.display: Any = None
        if self.live:
            self._start_live()

    # -- what the run reports ------------------------------------------------------------
    def step_started(self, path: str, kind: str, total: int | None = None, done: int = 0) -> None:
        with self.lock:
            self.any_step = True
            step = self.running.get(path)
            if step is None:
                step = self.running[path] = Running(path, kind, time.monotonic())
            if total is not None:
                step.total, step.done, step.done_at_start = total, done, done

    def __call__(self, entry: TraceEntry) -> None:
        line = describe(entry)
        if not self.live:
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        with self.lock:
            self.any_step = True
            if entry.kind == "item":
                parent = self.running.get(entry.step.rpartition("[")[0])
                if parent is not None:
                    parent.done += 1
                    parent.failed += entry.error is not None
                    if entry.error is None:
                        return  # counted in its foreach's line; a failed item keeps a line
            elif entry.kind != "retry":  # a failed attempt kept: the step goes on
                self.running.pop(entry.step, None)
        self.display.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def done(self) -> None:
        if self.display is not None:
            self.display.stop()
            self.display = None

    # -- the terminal's live region ------------------------------------------------------
    def _start_live(self) -> None:
        # deferred: rich (~40 ms); only a person watching a terminal sees the live region
        from rich.console import Console
        from rich.live import Live

        console = Console(file=self.stream, highlight=False)
        self.display = Live(_Region(self), console=console, refresh_per_second=8, transient=True,
                            # What nodes print goes above the region, not through it.
                            redirect_stdout=False, redirect_stderr=True)
        self.display.start()

    def region(self) -> str:
        now = time.monotonic()
        with self.lock:
            if not self.any_step:
                waited = now - self.started
                return f"waiting for {self.waiting_for}... {waited:.0f}s" if waited >= STARTUP_NOTICE_S else ""
            return "\n".join(step.line(now) for step in self.running.values())


class _Region:
    """Rebuilt on every refresh, so elapsed times move while nothing is committed."""

    def __init__(self, printer: ProgressPrinter) -> None:
        self.printer = printer

    def __rich__(self) -> Any:
        # deferred: rich, as above
        from rich.text import Text

        no_color = self.printer.display is not None and self.printer.display.console.no_color
        return Text(self.printer.region(), style="" if no_color else "dim")


@contextlib.contextmanager
def waiting(what: str) -> Iterator[None]:
    """On a terminal, `waiting for WHAT... Ns` on stderr once a command has taken a second
    (MCP servers starting); nothing when stderr is not a terminal or the work is quick."""
    printer = ProgressPrinter(waiting_for=what) if sys.stderr.isatty() else None
    try:
        yield
    finally:
        if printer is not None:
            printer.done()
