"""The typed results of a test run (re-exported by `wfops.api`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from wfops.diagnostics import Diagnostic

CaseStatus = Literal["passed", "failed", "error"]


@dataclass
class CaseResult:
    """One case: `passed`, `failed` (the run did not end as expected: see `diff`) or
    `error` (the test itself is wrong: a mock breaks the capability's contract, a call
    is not mocked, mocks ran out, the input or an interrupt answer is refused)."""

    name: str
    file: str
    line: int
    column: int
    workflow: str
    status: CaseStatus
    message: str = ""
    diff: str = ""
    duration: float = 0.0
    expected: dict[str, Any] = field(default_factory=dict)
    actual: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "line": self.line, "column": self.column,
                "workflow": self.workflow, "status": self.status, "message": self.message, "diff": self.diff,
                "duration": round(self.duration, 6), "expected": self.expected, "actual": self.actual}


@dataclass
class TestReport:
    """All cases run, in file order, and the findings that stopped files from running."""

    __test__ = False  # not a pytest class

    cases: list[CaseResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    duration: float = 0.0

    @property
    def invalid(self) -> bool:
        """Some test file (or the project) has errors: no case of it ran."""
        return any(d.is_error for d in self.diagnostics)

    @property
    def ok(self) -> bool:
        return not self.invalid and all(c.status == "passed" for c in self.cases)

    def count(self, status: CaseStatus) -> int:
        return sum(1 for c in self.cases if c.status == status)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "passed": self.count("passed"), "failed": self.count("failed"),
                "errors": self.count("error"), "duration": round(self.duration, 6), "files": self.files,
                "cases": [c.to_dict() for c in self.cases],
                "diagnostics": [d.to_dict() for d in self.diagnostics]}
