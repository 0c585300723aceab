"""Reporters: render a list of diagnostics as text, JSON, GitHub annotations or SARIF.

Checks never print; every verb that reports findings hands them to `render`.
Each format lives in its own module, imported only when asked for.
"""

from __future__ import annotations

from importlib import import_module
from typing import TextIO

from wfops.diagnostics import Diagnostic, sort_key
from wfops.errors import UsageError

FORMATS = {
    "text": "wfops.report.text",
    "json": "wfops.report.json_report",
    "github": "wfops.report.github",
    "sarif": "wfops.report.sarif",
}

__all__ = ["FORMATS", "render", "summary_line"]


def render(diagnostics: list[Diagnostic], fmt: str, stream: TextIO) -> None:
    """Write `diagnostics` to `stream` in format `fmt`, in file:line:col order."""
    module = FORMATS.get(fmt)
    if module is None:
        raise UsageError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
    ordered = sorted(diagnostics, key=sort_key)
    import_module(module).render(ordered, stream)


# Not called `summary`: `wfops.report.summary` is the GitHub step-summary module, and
# importing it would replace a package attribute of that name.
def summary_line(diagnostics: list[Diagnostic]) -> str:
    """`2 errors, 1 warning` (always the error count first), or `ok: no problems`."""
    if not diagnostics:
        return "ok: no problems"
    counts = {"error": 0, "warning": 0, "info": 0}
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
    parts = [_plural(counts["error"], "error")]
    if counts["warning"]:
        parts.append(_plural(counts["warning"], "warning"))
    if counts["info"]:
        parts.append(_plural(counts["info"], "note"))
    return ", ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
