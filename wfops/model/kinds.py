"""The one vocabulary of step kinds: the model, the checks, the engine, traces and graphs use it.

A step's kind is decided by which key it has; the kind's name is what traces and
graphs show (`call` for a `uses:` step, `condition` for an `if:` step). This module
imports nothing heavy: the loader's error messages need it before any model exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

StepKind = Literal["call", "workflow", "condition", "foreach", "parallel", "interrupt", "end"]

#: kind -> the key that makes a step that kind, in the order a raw step is tested
#: (a step with both `foreach:` and `uses:` is a foreach).
KIND_KEYS: dict[StepKind, str] = {
    "end": "end",
    "interrupt": "interrupt",
    "parallel": "parallel",
    "foreach": "foreach",
    "condition": "if",
    "workflow": "workflow",
    "call": "uses",
}

#: The keys, for messages and for finding a raw step's kind.
STEP_KEYS: tuple[str, ...] = tuple(KIND_KEYS.values())


def walk_steps(steps: list[Any], at: tuple[Any, ...] = ("steps",)) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every step with its document path, the steps of parallel branches included (each right
    after its parallel step): `(("steps", 2, "parallel", "a", 0), step)`."""
    for index, step in enumerate(steps):
        yield (*at, index), step
        for name, branch in (getattr(step, "parallel", None) or {}).items():
            yield from walk_steps(branch, (*at, index, "parallel", name))


def raw_kind(step: Any) -> StepKind | None:
    """The kind of a step given as plain data (a raw or normalized step), by its first kind key."""
    for kind, key in KIND_KEYS.items():
        if key in step:
            return kind
    return None


def catches(step: Any) -> list[Any]:
    """A step's `catch` entries in the order they are tried (one entry or a list; none: [])."""
    catch = getattr(step, "catch", None)
    if catch is None:
        return []
    return list(catch) if isinstance(catch, list) else [catch]
