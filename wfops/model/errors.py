"""Model validation errors that carry their own diagnostic code and repair hint.

`wfops.loader.project.schema_diagnostics` reads `code` and `hint` from the
error context, so a validator states once what is wrong and how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticCustomError

from wfops.model.paths import Location
from wfops.model.rules import Broken

ERROR_TYPE = "wfops"


def invalid(code: str, message: str, hint: str, at: Location = ()) -> PydanticCustomError:
    """`at`: keys and indexes below the validated value where the problem lies (a nested
    condition, say), so the diagnostic points at that node rather than the whole value."""
    # The message goes through the context, never into the template: braces in
    # examples such as `{eq: [a, b]}` would otherwise be read as placeholders.
    return PydanticCustomError(ERROR_TYPE, "{message}",
                               {"code": code, "message": message, "hint": hint, "at": list(at)})


def enforce(rule: Callable[..., None], *args: Any) -> None:
    """Apply a rule of `wfops.model.rules` inside a validator: its verdict as a pydantic error."""
    try:
        rule(*args)
    except Broken as broken:
        raise invalid(broken.code, broken.message, broken.hint, broken.at) from None
