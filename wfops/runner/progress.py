"""Per-step progress on stderr, fed by the sink right after each step is committed.

On a terminal one line is rewritten in place; when piped, one plain line per step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from typing import TextIO

from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.store.protocol import Store

OnStep = Callable[[TraceEntry], None]


class ProgressSink:
    """The engine's `CheckpointSink`: commit to the store first, then report."""

    def __init__(self, store: Store, on_step: OnStep | None = None) -> None:
        self.store = store
        self.on_step = on_step

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        self.store.commit(run, entries)
        if self.on_step is not None:
            for entry in entries:
                self.on_step(entry)


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.dirty = False

    def __call__(self, entry: TraceEntry) -> None:
        line = describe(entry)
        if self.live:
            self.stream.write("\r\x1b[K" + line[:max(20, _width() - 1)])
            self.dirty = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.dirty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.dirty = False


def describe(entry: TraceEntry) -> str:
    result = entry.outcome or ("waiting" if entry.kind == "interrupt" else "-")
    if entry.error:
        result = f"error {entry.error.get('type', '')}: {entry.error.get('message', '')}"
    arrow = f" -> {entry.next}" if entry.next else ""
    return f"  #{entry.seq} {entry.step} [{entry.kind}] {result}{arrow} ({_ms(entry)})"


def _ms(entry: TraceEntry) -> str:
    try:
        start = datetime.fromisoformat(entry.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(entry.ended_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return "?"
    ms = (end - start).total_seconds() * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def _width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 20)).columns
