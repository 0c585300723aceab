"""The core API: one owner for every rule, which the CLI and `wfops mcp` only render.

    from wfops.api import Project          # also `wfops.Project`
"""

from __future__ import annotations

from wfops.api.project import Project, validate_files
from wfops.api.results import (
    CallOutcome,
    Capabilities,
    CapabilityInfo,
    CaseResult,
    CompileReport,
    Interrupt,
    Report,
    Run,
    TestReport,
    TraceEntry,
)
from wfops.api.scaffold import Scaffold, init, schema

__all__ = ["CallOutcome", "Capabilities", "CapabilityInfo", "CaseResult", "CompileReport", "Interrupt", "Project",
           "Report", "Run", "Scaffold", "TestReport", "TraceEntry", "init", "schema", "validate_files"]
