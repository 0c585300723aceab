"""`file:line:col: severity[code] message`, an indented hint, then a summary line."""

from __future__ import annotations

from typing import TextIO

from wfops.diagnostics import Diagnostic
from wfops.report import summary_line


def format_one(d: Diagnostic) -> str:
    head = f"{d.file}:{d.line}:{d.column}: {d.severity}[{d.code}] {d.message}"
    return f"{head}\n  hint: {d.hint}" if d.hint else head


def render(diagnostics: list[Diagnostic], stream: TextIO) -> None:
    for d in diagnostics:
        stream.write(format_one(d) + "\n")
    stream.write(summary_line(diagnostics) + "\n")
