"""Diagnostics are data: checks return them, reporters render them, nothing here prints.

Besides where it stands (file, line, column), a finding may name what it is about:
its *subject* (`workflow`, `deployment`, `source`, `step`), set by the check that
knows it. Callers read these fields instead of searching the message text. The
subject is not part of the user-facing formats: `to_dict()` has the seven keys of
`--format json`; `to_dict(subject=True)` and `subject()` add it.

Every code is listed in wfops/codes.py; `error()` and `warning()` assert it.
"""

from __future__ import annotations

from typing import Any, Literal

from wfops.codes import KNOWN
from wfops.records import Record, init

Severity = Literal["error", "warning", "info"]

FIELDS = ("severity", "code", "message", "file", "line", "column", "hint")
SUBJECT_FIELDS = ("workflow", "deployment", "source", "step")


class Diagnostic(Record):
    """One finding. Frozen (`replace()` makes a changed copy), equal and hashed by its fields."""

    __slots__ = ("severity", "code", "message", "file", "line", "column", "hint",
                 "workflow", "deployment", "source", "step")

    severity: Severity
    code: str
    message: str
    file: str
    line: int
    column: int
    hint: str | None
    workflow: str | None     # the workflow the finding is about
    deployment: str | None   # the deployment (several: `a, b`, when only those produce it)
    source: str | None       # the concrete source id (as declared in sources.yaml)
    step: str | None         # the step id, within `workflow`

    def __init__(self, severity: Severity, code: str, message: str, file: str, line: int = 1, column: int = 1,
                 hint: str | None = None, *, workflow: str | None = None, deployment: str | None = None,
                 source: str | None = None, step: str | None = None) -> None:
        init(self, "severity", severity)
        init(self, "code", code)
        init(self, "message", message)
        init(self, "file", file)
        init(self, "line", line)
        init(self, "column", column)
        init(self, "hint", hint)
        init(self, "workflow", workflow)
        init(self, "deployment", deployment)
        init(self, "source", source)
        init(self, "step", step)

    def to_dict(self, *, subject: bool = False) -> dict[str, Any]:
        """The seven keys of the JSON format; with `subject`, the four subject keys too (None when unset)."""
        out = {name: getattr(self, name) for name in FIELDS}
        if subject:
            out.update((name, getattr(self, name)) for name in SUBJECT_FIELDS)
        return out

    def subject(self) -> dict[str, str]:
        """Only the subject fields that are set."""
        return {name: value for name in SUBJECT_FIELDS if (value := getattr(self, name)) is not None}

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def error(code: str, message: str, file: str, at: tuple[int, int] = (1, 1), hint: str | None = None, *,
          workflow: str | None = None, deployment: str | None = None, source: str | None = None,
          step: str | None = None) -> Diagnostic:
    assert code in KNOWN, f"unknown diagnostic code {code!r}: add it to wfops/codes.py"
    return Diagnostic("error", code, message, file, at[0], at[1], hint,
                      workflow=workflow, deployment=deployment, source=source, step=step)


def warning(code: str, message: str, file: str, at: tuple[int, int] = (1, 1), hint: str | None = None, *,
            workflow: str | None = None, deployment: str | None = None, source: str | None = None,
            step: str | None = None) -> Diagnostic:
    assert code in KNOWN, f"unknown diagnostic code {code!r}: add it to wfops/codes.py"
    return Diagnostic("warning", code, message, file, at[0], at[1], hint,
                      workflow=workflow, deployment=deployment, source=source, step=step)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def sort_key(d: Diagnostic) -> tuple[str, int, int, str, str]:
    return (d.file, d.line, d.column, d.code, d.message)
