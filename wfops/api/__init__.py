"""The core API: one owner for every rule, which the CLI and `wfops mcp` only render.

    from wfops.api import Project          # also `wfops.Project`

Names load lazily: `wfops validate` (pre-commit) imports only what a cache hit needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_LAZY = {
    "Project": "wfops.api.project", "validate_files": "wfops.api.project",
    "CallOutcome": "wfops.api.results", "Capabilities": "wfops.api.results",
    "CapabilityInfo": "wfops.api.results", "CompileReport": "wfops.api.results",
    "CopyReport": "wfops.api.results", "CacheEntry": "wfops.api.cache",
    "Report": "wfops.api.results", "Run": "wfops.api.runs", "RunDetails": "wfops.api.runs",
    "CaseResult": "wfops.testing.results", "TestReport": "wfops.testing.results",
    "Interrupt": "wfops.engine.types", "TraceEntry": "wfops.engine.types", "StepLog": "wfops.store.protocol",
    "Scaffold": "wfops.api.scaffold", "init": "wfops.api.scaffold", "schema": "wfops.api.scaffold",
    "ScheduleInfo": "wfops.api.schedules", "TickReport": "wfops.api.schedules", "TickItem": "wfops.api.schedules",
    "ScheduleWorkflow": "wfops.api.ci_schedule",
}

__all__ = ["CacheEntry", "CallOutcome", "Capabilities", "CapabilityInfo", "CaseResult", "CompileReport", "CopyReport",
           "Interrupt", "Project", "Report", "Run", "RunDetails", "Scaffold", "ScheduleInfo", "ScheduleWorkflow",
           "StepLog", "TestReport", "TickItem", "TickReport", "TraceEntry", "init", "schema", "validate_files"]

if TYPE_CHECKING:
    from wfops.api.cache import CacheEntry
    from wfops.api.ci_schedule import ScheduleWorkflow
    from wfops.api.project import Project, validate_files
    from wfops.api.results import (
        CallOutcome,
        Capabilities,
        CapabilityInfo,
        CompileReport,
        CopyReport,
        Report,
        Run,
        RunDetails,
    )
    from wfops.api.scaffold import Scaffold, init, schema
    from wfops.api.schedules import ScheduleInfo, TickItem, TickReport
    from wfops.engine.types import Interrupt, TraceEntry
    from wfops.store.protocol import StepLog
    from wfops.testing.results import CaseResult, TestReport


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wfops.api' has no attribute {name!r}")
    return getattr(import_module(module), name)
