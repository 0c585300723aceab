"""Reporters: render a list of diagnostics as text, JSON, GitHub annotations or SARIF.

Checks never print; every verb that reports findings hands them to `render`.
Each format lives in its own module, imported only when asked for.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import TextIO

from wfops.diagnostics import Diagnostic, sort_key
from wfops.errors import UsageError
from wfops.redact import mask

FORMATS = {
    "text": "wfops.report.text",
    "json": "wfops.report.json_report",
    "github": "wfops.report.github",
    "sarif": "wfops.report.sarif",
}

__all__ = ["FORMATS", "render", "summary_line"]


def render(diagnostics: list[Diagnostic], fmt: str, stream: TextIO, root: Path | None = None) -> None:
    """Write `diagnostics` to `stream` in format `fmt`, in file:line:col order.

    `root`: the project root the diagnostics' files are relative to. GitHub
    annotations and SARIF results are resolved against the checkout
    (`$GITHUB_WORKSPACE`, else the working directory), so for a project in a
    subdirectory of it their files are prefixed with that subdirectory; text and
    JSON keep project-relative files.
    """
    module = FORMATS.get(fmt)
    if module is None:
        raise UsageError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))
    if root is not None and fmt in ("github", "sarif"):
        prefix = below_checkout(root)
        if prefix:
            diagnostics = [d if os.path.isabs(d.file) else d.replace(file=f"{prefix}/{d.file}")
                           for d in diagnostics]
    # A message may quote what a source printed or raised: every format shows it masked.
    ordered = [d.replace(message=mask(d.message), hint=mask(d.hint) if d.hint else d.hint)
               for d in sorted(diagnostics, key=sort_key)]
    import_module(module).render(ordered, stream)


def below_checkout(root: Path) -> str:
    """The project root relative to the checkout, as a posix prefix ("" when it is the checkout)."""
    base = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        inside = root.resolve().relative_to(base.resolve())
    except (ValueError, OSError):
        return ""  # not below the checkout: project-relative is the best we have
    return "" if inside == Path(".") else inside.as_posix()


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
