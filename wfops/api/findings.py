"""What `validate` and `check` return: kept apart from the other results so that a validate
cache hit (pre-commit, every commit) builds only this class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wfops.diagnostics import Diagnostic

__all__ = ["Report"]


def _no_errors(diagnostics: list[Diagnostic]) -> bool:
    return not any(d.is_error for d in diagnostics)


@dataclass(frozen=True)
class Report:
    """Findings of `validate` or `check`: `ok` when none is an error (warnings allowed)."""

    diagnostics: list[Diagnostic]
    checked: list[str] = field(default_factory=list)    # files (or the inline text's name) reported on
    static_checks: bool = True                          # False: only syntax and schema could be checked
    deployments: list[str] = field(default_factory=list)  # the project's deployments, for what comes next
    # `check`: what was compared with wfops.lock: {"workflows", "deployments", "contracts",
    # "mcp_servers_contacted"} (empty for `validate`)
    verified: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return _no_errors(self.diagnostics)
