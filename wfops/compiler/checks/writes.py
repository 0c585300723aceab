"""Writes that can meet: two branches of one parallel step, or the items of one foreach through
`save_each`, writing one state field that no reducer merges (the last writer would win in
silence); and writes that may not happen (a conditional branch's), into a field with no default."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.paths import step_writes
from wfops.compiler.checks.scope import safe_target
from wfops.loader.project import Loaded
from wfops.model.kinds import walk_steps
from wfops.model.rules import MERGING_REDUCERS, writes_conflict

_MERGERS = ", ".join(f"`{name}`" for name in sorted(MERGING_REDUCERS))
Write = tuple[tuple[Any, ...], str, str, tuple[str, ...]]  # (document path, target, field, keys)


def check_writes(loaded: Loaded, sink: Sink) -> None:
    conditional: dict[str, Write] = {}  # field -> its first write inside a conditional branch
    unconditional: set[str] = set()
    skippable: list[tuple[Any, ...]] = []  # document paths of the conditional branches
    for at, step in walk_steps(loaded.model.steps):  # a parallel step comes before its branches' steps
        branches = getattr(step, "parallel", None)
        if branches:
            _branches(loaded, sink, at, step, branches)
            skippable += [(*at, "parallel", name) for name in getattr(step, "when", None) or {}]
        if getattr(step, "foreach", None) is not None:
            _fan_out(loaded, sink, at, step)
        for write in _writes(loaded, at, step):
            if any(at[:len(prefix)] == prefix for prefix in skippable):
                conditional.setdefault(write[2], write)
            else:
                unconditional.add(write[2])
    for field, (where, target, _, _) in conditional.items():
        if field not in unconditional and "default" not in loaded.model.state[field].json_schema():
            sink.warning("optional-save", f"`{target}` is written only inside a conditional branch (`when:`), "
                         f"so a run that skips it leaves state field `{field}` unset", loaded, where,
                         hint=f"give state field `{field}` a `default:`, so a skipped branch still leaves a value")


def _writes(loaded: Loaded, at: tuple[Any, ...], step: Any) -> list[Write]:
    found: list[Write] = []
    for inner, target in step_writes(step):
        parsed = safe_target(target)
        if parsed is None:
            continue  # reported by the path checks
        field, keys = parsed
        if field in loaded.model.state:  # an undeclared field is reported by the path checks
            found.append(((*at, *inner), target, field, keys))
    return found


def _writes_under(loaded: Loaded, steps: list[Any], at: tuple[Any, ...]) -> list[Write]:
    return [write for where, step in walk_steps(steps, at) for write in _writes(loaded, where, step)]


def _branches(loaded: Loaded, sink: Sink, at: tuple[Any, ...], step: Any, branches: dict[str, list[Any]]) -> None:
    writes = {name: _writes_under(loaded, steps, (*at, "parallel", name)) for name, steps in branches.items()}
    reported: set[str] = set()
    for (first, mine), (second, theirs) in combinations(sorted(writes.items()), 2):
        for _, target, field, keys in mine:
            for where, other, other_field, other_keys in theirs:
                if field != other_field or field in reported:
                    continue
                reducer = loaded.model.state[field].reducer
                if writes_conflict(reducer, keys, other_keys):
                    reported.add(field)
                    sink.error("concurrent-write", f"branches `{first}` and `{second}` of parallel step "
                               f"`{step.id}` can both write {_what(field, reducer, target, other)}", loaded, where,
                               hint=_hint(field, keys or other_keys, "let one branch write it"))


def _fan_out(loaded: Loaded, sink: Sink, at: tuple[Any, ...], step: Any) -> None:
    for where, target, field, keys in _writes(loaded, at, step):
        if where[len(at)] != "save_each":
            continue
        reducer = loaded.model.state[field].reducer
        if writes_conflict(reducer, keys, keys):
            sink.error("concurrent-write", f"every item of foreach step `{step.id}` writes "
                       f"{_what(field, reducer, target, target)} through `save_each`", loaded, where,
                       hint=_hint(field, keys, "or use `save:` to write the list of item results once"))


def _what(field: str, reducer: str, target: str, other: str) -> str:
    if target == other == f"state.{field}":
        return f"`{target}`, whose reducer `{reducer}` keeps only the last write"
    return f"`{target}` and `{other}`, which overlap"


def _hint(field: str, keyed: tuple[str, ...], otherwise: str) -> str:
    if keyed:
        return f"write different keys of `{field}` (or different fields), {otherwise}"
    return f"give state field `{field}` a reducer that merges writes ({_MERGERS}), {otherwise}"
