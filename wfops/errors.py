"""The exception tree. Each known error carries the exit code the CLI ends with.

    WfopsError                 exit 1 unless said otherwise
    ├── UsageError             exit 2: bad flags or arguments
    ├── RefusedError           exit 2: a run that may not start (input, validation, drift)
    ├── ProjectNotFound        exit 2
    ├── UnknownRunError        exit 1
    ├── StoreError             exit 4: locked, corrupt, full or too-new store
    │   └── RunBusyError       exit 5: another process is driving this run
    └── CapabilityError        a capability call failed (a step failure, not a CLI error)
        └── StepTimeout
"""

from __future__ import annotations


class WfopsError(Exception):
    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(WfopsError):
    exit_code = 2


class RefusedError(WfopsError):
    """The run was refused before it started; `diagnostics` says why."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, diagnostics: list | None = None) -> None:
        super().__init__(message, hint=hint)
        self.diagnostics = diagnostics or []


class ProjectNotFound(WfopsError):
    exit_code = 2


class UnknownRunError(WfopsError):
    exit_code = 1


class StoreError(WfopsError):
    exit_code = 4


class RunBusyError(StoreError):
    exit_code = 5


class CapabilityError(WfopsError):
    """Raised by capabilities (or sources) for a failed call. The engine turns it into a step failure."""

    error_type = "CapabilityError"


class StepTimeout(CapabilityError):
    error_type = "Timeout"
