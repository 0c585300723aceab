"""The exception tree every public function of wfops raises from.

    WfopsError                 a known failure: `message` says what, `hint` how to fix it
    ├── UsageError             bad arguments: a flag, a path, a JSON value
    ├── RefusedError           a run that may not start (input, validation, drift); `diagnostics` say why
    ├── ProjectNotFound        no wfops project where one was asked for
    ├── UnknownRunError        no run with that id in the store
    ├── StoreError             the store is locked, corrupt, full or too new
    │   └── RunBusyError       another process is driving this run
    ├── UnstorableValue        a value the store cannot hold as JSON (the engine fails the step)
    ├── CallFailed             `Project.call`: the capability failed; `error` is `{type, message, step}`
    └── CapabilityError        raised by capabilities (or sources) for a failed call: a step failure
        └── StepTimeout

The classes carry no exit codes: the CLI maps them to its exit statuses at its own
boundary (`wfops.cli.exits`), and the MCP server turns them into results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wfops.diagnostics import Diagnostic


class WfopsError(Exception):
    #: The stored run the error stopped: set by the runner on every error raised after the
    #: run was stored, so a caller can always name (and resume) it.
    run_id: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(WfopsError):
    pass


class InvalidArgument(UsageError):
    """An argument of an API or tool call that is unknown, ill-typed or out of range; names it."""

    def __init__(self, message: str, *, argument: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.argument = argument


class RefusedError(WfopsError):
    """The run was refused before it started; `diagnostics` says why."""

    def __init__(self, message: str, *, hint: str | None = None,
                 diagnostics: Sequence[Diagnostic] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])


class ProjectNotFound(WfopsError):
    pass


class UnknownRunError(WfopsError):
    pass


class StoreError(WfopsError):
    """`remedy` (e.g. "free disk space") is what to fix before trying again; the hint then
    says to try again, or, once a run was stored, how to resume it."""

    def __init__(self, message: str, *, hint: str | None = None, remedy: str | None = None) -> None:
        super().__init__(message, hint=hint or (f"{remedy}, then try again" if remedy else None))
        self.remedy = remedy


class RunBusyError(StoreError):
    pass


class UnstorableValue(WfopsError):
    """A value that cannot be written as JSON (non-finite, too long to print, not Unicode).

    Values are checked where they enter; this is the store's last word when one slipped
    through, so the engine can fail the run with the reason instead of leaving it `running`.
    """


class CallFailed(WfopsError):
    """A capability called on its own (`Project.call`, `wfops caps call`) failed as a run's step would."""

    def __init__(self, message: str, *, error: dict[str, Any], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.error = error


class CapabilityError(WfopsError):
    """Raised by capabilities (or sources) for a failed call. The engine turns it into a step failure."""

    error_type = "CapabilityError"


class StepTimeout(CapabilityError):
    error_type = "Timeout"


class SourceLost(CapabilityError):
    """A source's server process or connection was lost during the call (it crashed, was killed
    or exited). A step failure like any other; the source starts it again for the next call."""


class RunStopped(WfopsError):
    """A run stopped before its end without failing: its state is kept at its last committed
    step and resuming it goes on from there (e.g. a step whose source's server died, with no
    retry left and no `catch:`)."""

    def __init__(self, message: str, *, run_id: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.run_id = run_id
