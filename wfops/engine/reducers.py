"""State reducers and the writes a step makes.

Reducers never mutate: each write builds a new value, so a value saved in two
places, or still referenced by a trace entry, never changes behind anyone's back.
The first write to an absent field starts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wfops.engine.values import json_equal
from wfops.jsonvalues import described, number_problem

Reducer = Callable[[Any, Any], Any]  # (old, written) -> new; old is ABSENT for the first write
ABSENT: Any = object()


class ReducerError(Exception):
    pass


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _replace(old: Any, new: Any) -> Any:
    return new


def _append(old: Any, new: Any) -> Any:
    return [new] if old is ABSENT else [*_as_list(old), new]


def _extend(old: Any, new: Any) -> Any:
    return _as_list(new) if old is ABSENT else [*_as_list(old), *_as_list(new)]


def _union(old: Any, new: Any) -> Any:
    result: list[Any] = []
    for item in ([] if old is ABSENT else _as_list(old)) + _as_list(new):
        if not any(json_equal(item, seen) for seen in result):
            result.append(item)
    return result


def _merge(old: Any, new: Any) -> Any:
    if not isinstance(new, dict):
        raise ReducerError(f"merge needs an object, got {described(new)}")
    if old is ABSENT or old is None:
        return dict(new)
    if not isinstance(old, dict):
        raise ReducerError(f"merge into a field that holds {described(old)}")
    return {**old, **new}


def _numeric(name: str, combine: Callable[[Any, Any], Any]) -> Reducer:
    def reduce(old: Any, new: Any) -> Any:
        if not isinstance(new, int | float) or isinstance(new, bool):
            raise ReducerError(f"{name} needs a number, got {described(new)}")
        if old is ABSENT or old is None:
            return new
        try:
            result = combine(old, new)
        except OverflowError:  # a 400-digit integer plus a float
            raise ReducerError(f"{name} overflows: the result is too large for a JSON number") from None
        problem = number_problem(result)
        if problem is not None:  # two 1.7e308 sum to inf; two 4000-digit integers to 4001 digits
            raise ReducerError(f"{name} overflows: {problem}")
        return result

    return reduce


REDUCERS: dict[str, Reducer] = {
    "replace": _replace,
    "append": _append,
    "extend": _extend,
    "union": _union,
    "merge": _merge,
    "add": _numeric("add", lambda a, b: a + b),
    "min": _numeric("min", min),
    "max": _numeric("max", max),
}


def _set_in(container: Any, keys: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of `container` (an object, or absent) with `value` at `keys`."""
    base = dict(container) if isinstance(container, dict) else {}
    head, rest = keys[0], keys[1:]
    base[head] = _set_in(base.get(head), rest, value) if rest else value
    return base


def apply_write(state: dict[str, Any], reducers: dict[str, Reducer], field: str,
                keys: tuple[str, ...], value: Any) -> None:
    """Apply one write to `state` in place. Whole-field writes go through the field's
    reducer; a write to `state.f.k` sets that key (copying the object on the way)."""
    if keys:
        old = state.get(field)
        if old is not None and not isinstance(old, dict):
            raise ReducerError(f"state.{field} holds {described(old)}, not an object")
        state[field] = _set_in(old, keys, value)
        return
    reducer = reducers.get(field, _replace)
    try:
        state[field] = reducer(state.get(field, ABSENT), value)
    except TypeError as exc:
        raise ReducerError(str(exc)) from None
