"""`{"ok": bool, "diagnostics": [...]}`; ok means no errors (warnings allowed)."""

from __future__ import annotations

import json
from typing import Any, TextIO, TypedDict

from wfops.diagnostics import Diagnostic, has_errors

FIELDS = ("severity", "code", "message", "file", "line", "column", "hint")


class JsonReport(TypedDict):
    ok: bool
    diagnostics: list[dict[str, Any]]  # FIELDS of each diagnostic


def as_data(diagnostics: list[Diagnostic]) -> JsonReport:
    return {
        "ok": not has_errors(diagnostics),
        "diagnostics": [{name: getattr(d, name) for name in FIELDS} for d in diagnostics],
    }


def render(diagnostics: list[Diagnostic], stream: TextIO) -> None:
    stream.write(json.dumps(as_data(diagnostics), indent=2, ensure_ascii=False) + "\n")
