"""Per-step progress on stderr while a run goes: on a terminal one line rewritten in
place, when piped one plain line per step."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from wfops.api import TraceEntry
from wfops.report.trace import describe


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.dirty = False

    def __call__(self, entry: TraceEntry) -> None:
        line = describe(entry)
        if self.live:
            width = shutil.get_terminal_size((100, 20)).columns
            self.stream.write("\r\x1b[K" + line[:max(20, width - 1)])
            self.dirty = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.dirty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.dirty = False
