"""What `validate` and `check` return: kept apart from the other results so that a validate
cache hit (pre-commit, every commit) builds only this class."""

from __future__ import annotations

from typing import Any

from wfops.diagnostics import Diagnostic
from wfops.records import Record, init

__all__ = ["Report"]


def _no_errors(diagnostics: list[Diagnostic]) -> bool:
    return not any(d.is_error for d in diagnostics)


class Report(Record):
    """Findings of `validate` or `check`: `ok` when none is an error (warnings allowed)."""

    __slots__ = ("diagnostics", "checked", "static_checks", "deployments", "verified")

    diagnostics: list[Diagnostic]
    checked: list[str]          # files (or the inline text's name) reported on
    static_checks: bool         # False: only syntax and schema could be checked
    deployments: list[str]      # the project's deployments, for what comes next
    # `check`: what was compared with wfops.lock: {"workflows", "deployments", "contracts",
    # "mcp_servers_contacted"} (empty for `validate`)
    verified: dict[str, Any]

    def __init__(self, diagnostics: list[Diagnostic], checked: list[str] | None = None, static_checks: bool = True,
                 deployments: list[str] | None = None, verified: dict[str, Any] | None = None) -> None:
        init(self, "diagnostics", diagnostics)
        init(self, "checked", [] if checked is None else checked)
        init(self, "static_checks", static_checks)
        init(self, "deployments", [] if deployments is None else deployments)
        init(self, "verified", {} if verified is None else verified)

    @property
    def ok(self) -> bool:
        return _no_errors(self.diagnostics)
