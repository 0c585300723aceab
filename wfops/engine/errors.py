"""Errors the engine raises to its callers, and the step failure it carries internally."""

from __future__ import annotations

from typing import Any

from wfops.errors import RefusedError
from wfops.sources.contract import raised


class InvalidInput(RefusedError):
    """The run input (or a resume payload) does not match its schema; nothing was committed."""


class StepFailed(Exception):
    """A step failed: turned into `{type, message, step}` and routed by `catch` or failing the run.

    `catchable=False` marks workflow bugs (an outcome nobody routes) that `catch` must not hide.
    """

    def __init__(self, type_: str, message: str, *, catchable: bool = True) -> None:
        super().__init__(message)
        self.type = type_
        self.message = message
        self.catchable = catchable
        self.attempt = 1  # attempts made before giving up
        self.inner_step: str | None = None  # where a child workflow failed, for the error's `step`

    def as_error(self, step: str) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "step": step}


def failure_of(exc: BaseException) -> StepFailed:
    """Any exception a capability raised, as a step failure (the type name, never a traceback),
    read as `raised` reads it (a Dask worker reads its node's exceptions the same way)."""
    if isinstance(exc, StepFailed):
        return exc
    return StepFailed(*raised(exc))
