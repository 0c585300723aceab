"""Values and conditions compiled once into small closures over a `Scope`.

A string starting with `$` is a path (`$$` escapes a literal `$`); paths may stand
anywhere in a nested value. A path that does not exist resolves to null, at any
depth, for every root (`exists` is how a workflow tells null from missing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wfops.model.paths import parse_path
from wfops.sources.base import StepContext

MISSING: Any = object()


class Scope:
    """What paths can read while one step runs."""

    __slots__ = ("input", "state", "ctx", "item", "index", "secrets")

    def __init__(self, input: Any, state: dict[str, Any], ctx: StepContext | None,
                 secrets: Mapping[str, str], item: Any = None, index: int | None = None) -> None:
        self.input = input
        self.state = state
        self.ctx = ctx
        self.secrets = secrets
        self.item = item
        self.index = index


Getter = Callable[[Scope], Any]

_ROOTS: dict[str, Getter] = {
    "input": lambda s: s.input,
    "state": lambda s: s.state,
    "context": lambda s: s.ctx.as_dict() if s.ctx is not None else MISSING,
    "item": lambda s: s.item,
    "index": lambda s: s.index,
    "secret": lambda s: s.secrets,
}


def walk(value: Any, parts: tuple[str | int, ...]) -> Any:
    for part in parts:
        if isinstance(value, dict):
            value = value.get(part if isinstance(part, str) else str(part), MISSING)
        elif isinstance(value, list) and isinstance(part, int):
            value = value[part] if part < len(value) else MISSING
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


def compile_path(text: str) -> Getter:
    """A getter returning MISSING for an absent path (callers map it to null). Getters are
    pure functions of the text, so one is shared by every step that reads the same path."""
    getter = _PATHS.get(text)
    if getter is None:
        _bound()
        getter = _PATHS[text] = _compile_path(text)
    return getter


_PATHS: dict[str, Getter] = {}
_RESOLVERS: dict[str, Getter] = {}  # path text -> its getter with missing mapped to null
_FLAT: dict[tuple[tuple[str, str], ...], Getter] = {}  # a flat dict of text -> its getter
_MAX_PATHS = 4096


def _bound() -> None:
    if max(len(_PATHS), len(_RESOLVERS), len(_FLAT)) >= _MAX_PATHS:  # long-lived processes (watch,
        _PATHS.clear()                                                 # mcp) compile new workflows
        _RESOLVERS.clear()
        _FLAT.clear()


def _compile_path(text: str) -> Getter:
    path = parse_path(text)
    root, parts = _ROOTS[path.root], path.parts
    if not parts:
        return root
    if path.root == "state" and len(parts) == 1 and isinstance(parts[0], str):
        name = parts[0]  # the common case, kept to one dict lookup
        return lambda s: s.state.get(name, MISSING)
    return lambda s: walk(root(s), parts)


def _resolver(text: str) -> Getter:
    """`compile_path(text)` with MISSING as null, shared like the path getters."""
    resolve = _RESOLVERS.get(text)
    if resolve is None:
        name = _state_field(text)
        if name is not None:  # the common case: a missing field is null without the sentinel

            def resolve(s: Scope) -> Any:
                return s.state.get(name)
        else:
            getter = compile_path(text)

            def resolve(s: Scope) -> Any:
                found = getter(s)
                return None if found is MISSING else found

        _bound()
        _RESOLVERS[text] = resolve
    return resolve


def _state_field(text: str) -> str | None:
    """The field a `$state.<field>` path reads, for a path of that form alone."""
    path = parse_path(text)
    if path.root == "state" and len(path.parts) == 1 and isinstance(path.parts[0], str):
        return path.parts[0]
    return None


def _const(value: Any) -> Getter:
    return lambda _s: value


def _unescaped(value: Any) -> Any:
    if isinstance(value, str):
        return value[1:] if value.startswith("$$") else value
    if isinstance(value, dict):
        return {k: _unescaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescaped(v) for v in value]
    return value


def compile_value(value: Any) -> Getter:
    """A getter that builds `value` with every path resolved (missing -> null)."""
    if type(value) is dict and all(type(v) is str for v in value.values()):
        # The common `with:` (names to paths or text) is planned once for every step that
        # passes the same: its getter is a pure function of the value and builds a new dict
        # per call. (A constant is not shared: each step keeps its own object.)
        key = tuple(value.items())
        getter = _FLAT.get(key)
        if getter is None:
            getter = _with_paths(value)
            if getter is None:
                return _const(_unescaped(value))
            _bound()
            _FLAT[key] = getter
        return getter
    getter = _with_paths(value)
    return _const(_unescaped(value)) if getter is None else getter


def _with_paths(value: Any) -> Getter | None:
    """The getter of a value that holds a path, or None for one that holds none (a constant);
    one pass over the value (planning a long workflow runs this for every step)."""
    if isinstance(value, str):
        return _resolver(value) if value.startswith("$") and not value.startswith("$$") else None
    if isinstance(value, dict):
        found = [(k, _with_paths(v)) for k, v in value.items()]
        if all(g is None for _k, g in found):
            return None
        items = [(k, _const(_unescaped(value[k])) if g is None else g) for k, g in found]
        if len(items) == 1:  # `with: {value: $state.x}`: no comprehension (a function of its own) per call
            (key, only), = items
            return lambda s: {key: only(s)}
        return lambda s: {k: g(s) for k, g in items}
    if isinstance(value, list):
        elements = [_with_paths(v) for v in value]
        if all(g is None for g in elements):
            return None
        getters = [_const(_unescaped(v)) if g is None else g for v, g in zip(value, elements, strict=True)]
        return lambda s: [g(s) for g in getters]
    return None


Predicate = Callable[[Scope], bool]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: `true` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """Comparisons hold only between two numbers or two strings; anything else is false."""

    def compare(a: Any, b: Any) -> bool:
        if (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
            return op(a, b)
        return False

    return compare


_BINARY: dict[str, Callable[[Any, Any], bool]] = {
    "eq": json_equal,
    "ne": lambda a, b: not json_equal(a, b),
    "gt": _ordered(lambda a, b: a > b),
    "ge": _ordered(lambda a, b: a >= b),
    "lt": _ordered(lambda a, b: a < b),
    "le": _ordered(lambda a, b: a <= b),
    "in": lambda x, seq: isinstance(seq, list) and any(json_equal(x, item) for item in seq),
}


def compile_condition(cond: dict[str, Any]) -> Predicate:
    (op, operand), = cond.items()
    if op == "and":
        parts = [compile_condition(c) for c in operand]
        return lambda s: all(p(s) for p in parts)
    if op == "or":
        parts = [compile_condition(c) for c in operand]
        return lambda s: any(p(s) for p in parts)
    if op == "not":
        inner = compile_condition(operand)
        return lambda s: not inner(s)
    if op == "exists":
        getter = compile_path(operand)
        return lambda s: getter(s) not in (MISSING, None)
    test = _BINARY[op]
    left, right = compile_value(operand[0]), compile_value(operand[1])
    return lambda s: test(left(s), right(s))
