"""GitHub Actions workflow commands, which become annotations on the pull request.

Escaping follows the runner's own rules (actions/toolkit `command.ts`): data
escapes `%`, CR and LF; property values also escape `:` and `,`, which would
otherwise end the value.
"""

from __future__ import annotations

from typing import TextIO

from wfops.diagnostics import Diagnostic
from wfops.report import summary_line

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_one(d: Diagnostic) -> str:
    props = ",".join(
        f"{name}={escape_property(str(value))}"
        for name, value in (("file", d.file), ("line", d.line), ("col", d.column),
                            ("title", f"wfops {d.code}"))
    )
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return f"::{_COMMAND.get(d.severity, 'notice')} {props}::{escape_data(message)}"


def render(diagnostics: list[Diagnostic], stream: TextIO) -> None:
    for d in diagnostics:
        stream.write(format_one(d) + "\n")
    # A plain line: the runner shows it in the log and ignores it as a command.
    stream.write(summary_line(diagnostics) + "\n")
