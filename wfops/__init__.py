"""wfops: declarative workflows in git, compiled to locked artifacts, run durably.

The public API (documented in docs/api.md):

    project = wfops.Project(root)           # validate, compile, check, run, resume, runs,
                                            # trace, capabilities, call, graph, test
    wfops.init(directory), wfops.schema(kind), wfops.validate_files(paths)
    @wfops.node / wfops.Result              # python sources
    wfops.WfopsError and its subclasses     # every failure, from one tree

Names load lazily, so that `import wfops.cli` stays cheap for pre-commit hooks.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
# Where wfops lives: SARIF `informationUri`, the scaffolded CI install (`git+<this>@v<version>`).
REPOSITORY = "https://github.com/wfops/wfops"

_LAZY = {
    "Project": "wfops.api", "Report": "wfops.api", "CompileReport": "wfops.api", "Run": "wfops.api",
    "Interrupt": "wfops.api", "TraceEntry": "wfops.api", "Capabilities": "wfops.api",
    "CapabilityInfo": "wfops.api", "CallOutcome": "wfops.api", "Scaffold": "wfops.api",
    "TestReport": "wfops.api", "CaseResult": "wfops.api",
    "init": "wfops.api", "schema": "wfops.api", "validate_files": "wfops.api",
    "Diagnostic": "wfops.diagnostics",
    "node": "wfops.sources.python", "Result": "wfops.sources.python",
    "WfopsError": "wfops.errors", "UsageError": "wfops.errors", "RefusedError": "wfops.errors",
    "ProjectNotFound": "wfops.errors", "UnknownRunError": "wfops.errors", "StoreError": "wfops.errors",
    "RunBusyError": "wfops.errors", "CallFailed": "wfops.errors", "CapabilityError": "wfops.errors",
    "StepTimeout": "wfops.errors",
}

__all__ = [
    "CallFailed", "CallOutcome", "Capabilities", "CapabilityError", "CapabilityInfo", "CaseResult",
    "CompileReport", "Diagnostic", "Interrupt", "Project", "ProjectNotFound", "RefusedError",
    "Report", "Result", "Run", "RunBusyError", "Scaffold", "StepTimeout", "StoreError",
    "TestReport", "TraceEntry", "UnknownRunError", "UsageError", "WfopsError", "__version__", "init", "node",
    "schema", "validate_files",
]

if TYPE_CHECKING:
    from wfops.api import (
        CallOutcome,
        Capabilities,
        CapabilityInfo,
        CaseResult,
        CompileReport,
        Interrupt,
        Project,
        Report,
        Run,
        Scaffold,
        TestReport,
        TraceEntry,
        init,
        schema,
        validate_files,
    )
    from wfops.diagnostics import Diagnostic
    from wfops.errors import (
        CallFailed,
        CapabilityError,
        ProjectNotFound,
        RefusedError,
        RunBusyError,
        StepTimeout,
        StoreError,
        UnknownRunError,
        UsageError,
        WfopsError,
    )
    from wfops.sources.python import Result, node


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wfops' has no attribute {name!r}")
    return getattr(import_module(module), name)
