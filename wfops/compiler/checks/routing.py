"""Routing: every target exists, every producible outcome is routed exactly once,
nothing undeclared is routed, and every step can be reached from `start`."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.context import Sink, catch_places
from wfops.compiler.checks.names import suggest
from wfops.loader.project import Loaded


def route_entries(step: Any) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(outcome, target, document path of the target) for every route of a step, catch included."""
    entries: list[tuple[str, str, tuple[Any, ...]]] = []
    if getattr(step, "next", None) is not None:
        entries.append(("ok", step.next, ("next",)))
    for outcome, target in (getattr(step, "on", None) or {}).items():
        entries.append((outcome, target, ("on", outcome)))
    if hasattr(step, "then"):
        entries += [("then", step.then, ("then",)), ("else", step.else_, ("else",))]
    if getattr(step, "catch", None) is not None:
        for at, catch in catch_places(step):
            entries.append(("catch", catch.next, (*at, "next")))
    return entries


def check_targets(loaded: Loaded, sink: Sink) -> None:
    ids = [step.id for step in loaded.model.steps]
    known = set(ids)
    for index, step in enumerate(loaded.model.steps):
        for outcome, target, where in route_entries(step):
            if target != "end" and target not in known:
                what = "a failure (catch)" if outcome == "catch" else f"outcome `{outcome}`"
                branch = getattr(loaded, "branch", None)
                if branch:  # a branch routes among its own steps; `end` finishes the branch
                    sink.error("unknown-target", f"step `{step.id}` routes {what} to `{target}`, which is not a "
                               f"step of parallel branch `{branch}`", loaded, ("steps", index, *where),
                               hint=suggest(target, ids, "route to a step of the same branch, or to `end` (the "
                                            "parallel step's own `next` says where the run goes after the join)"))
                    continue
                sink.error("unknown-target", f"step `{step.id}` routes {what} to `{target}`, which is not a step "
                           "of this workflow", loaded, ("steps", index, *where),
                           hint=suggest(target, ids, "route to a step id, or to `end`"))


def check_reachable(loaded: Loaded, sink: Sink) -> None:
    steps = {step.id: step for step in reversed(loaded.model.steps)}  # first wins on duplicates
    start = loaded.model.start_step
    if start not in steps:
        return  # invalid-start already said so
    reached, pending = {start}, [start]
    broken = False  # a reached step routes to a step that does not exist
    while pending:
        for _, target, _ in route_entries(steps[pending.pop()]):
            broken = broken or (target != "end" and target not in steps)
            if target in steps and target not in reached:
                reached.add(target)
                pending.append(target)
    if broken:
        # One mistyped route cuts off every step after it: `unknown-target` names that cause
        # (with the closest step id); a warning for each step it cut off would bury it.
        return
    for index, step in enumerate(loaded.model.steps):
        if step.id not in reached:
            sink.warning("unreachable-step", f"step `{step.id}` is never reached from `{start}`", loaded,
                         ("steps", index, "id"),
                         hint=f"route an outcome of another step to `{step.id}`, or remove the step")


def child_outcomes(child: Loaded) -> set[str]:
    """What a subworkflow step can end in: `ok` if the child can reach `end`, plus its `end:` values."""
    outcomes: set[str] = set()
    for step in child.model.steps:
        end = getattr(step, "end", None)
        if isinstance(end, str) and not hasattr(step, "uses"):
            outcomes.add(end)
        if any(target == "end" for _, target, _ in route_entries(step)):
            outcomes.add("ok")
    return outcomes


def check_outcomes(loaded: Loaded, index: int, producible: set[str], producer: str, sink: Sink) -> None:
    """`producible` outcomes must each be routed; routes for anything else are undeclared."""
    step = loaded.model.steps[index]
    routed = {outcome: where for outcome, _, where in route_entries(step) if outcome != "catch"}
    for outcome, where in routed.items():
        if outcome not in producible:
            listed = ", ".join(f"`{o}`" for o in sorted(producible)) or "none"
            sink.error("undeclared-outcome", f"step `{step.id}` routes outcome `{outcome}`, but {producer} never "
                       f"produces it (its outcomes: {listed})", loaded, ("steps", index, *where),
                       hint=f"remove the `{outcome}` route" if where != ("next",) else
                       "replace `next:` with `on:` routes for the outcomes it does produce", key=True)
    for outcome in sorted(producible - set(routed)):
        sink.error("unrouted-outcome", f"step `{step.id}` can end in outcome `{outcome}`, which is not routed "
                   "(there is no fall-through to the next step)", loaded, ("steps", index),
                   hint=_route_hint(loaded, index, outcome))


def _route_hint(loaded: Loaded, index: int, outcome: str) -> str:
    steps = loaded.model.steps
    following = steps[index + 1].id if index + 1 < len(steps) else "end"
    step = steps[index]
    if outcome == "ok" and getattr(step, "on", None) is None:
        return f"add `next: {following}`" + (" (or `next: end`)" if following != "end" else "")
    return f"add `{outcome}: <step id or end>` under `on:`, e.g. `on: {{{outcome}: {following}}}`"
