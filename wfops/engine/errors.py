"""Errors the engine raises to its callers, and the step failure it carries internally."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wfops.errors import RefusedError


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


#: A node's exception message is stored and printed: longer ones are cut here.
MAX_MESSAGE = 4000


def failure_of(exc: BaseException) -> StepFailed:
    """Any exception a capability raised, as a step failure (the type name, never a traceback).

    The exception is foreign code: its `__str__`, `message` or `error_type` may raise, be
    no string, be huge or hold text that is not Unicode; none of that may end the run."""
    if isinstance(exc, StepFailed):
        return exc
    name = type(exc).__name__
    type_ = _text_of(lambda: getattr(exc, "error_type", None)) or name
    message = _text_of(lambda: getattr(exc, "message", None)) or _text_of(lambda: str(exc)) or name
    return StepFailed(type_[:200], message)


def _text_of(read: Callable[[], object]) -> str | None:
    try:
        value = read()
        if not isinstance(value, str):
            return None
        # Lone surrogates cannot be stored or printed: shown as escapes instead.
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    except Exception:  # noqa: BLE001 - a broken __str__ leaves the type name to speak
        return None
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "... (cut)"
