"""Diagnostics are data: checks return them, reporters render them, nothing here prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    code: str
    message: str
    file: str
    line: int = 1
    column: int = 1
    hint: str | None = None
    workflow: str | None = None
    deployment: str | None = None
    source: str | None = None
    step: str | None = None

    def to_dict(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message, "file": self.file,
                "line": self.line, "column": self.column, "hint": self.hint}

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def error(code: str, message: str, file: str, at: tuple[int, int] = (1, 1), hint: str | None = None,
          **subject: str | None) -> Diagnostic:
    return Diagnostic("error", code, message, file, at[0], at[1], hint, **subject)


def warning(code: str, message: str, file: str, at: tuple[int, int] = (1, 1), hint: str | None = None) -> Diagnostic:
    return Diagnostic("warning", code, message, file, at[0], at[1], hint)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def sort_key(d: Diagnostic) -> tuple:
    return (d.file, d.line, d.column, d.code, d.message)
