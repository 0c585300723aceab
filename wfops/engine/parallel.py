"""The parallel step: named branches run side by side, each as a frame of its own that starts
from the state as it was when the step started. When all have finished, their writes (the
state changes each branch committed, in order) go through the state fields' reducers onto
that state in branch-name order, whatever order they finished in. Two branches that wrote
one field its reducer cannot merge (`replace`, or the same key of an object) fail the step
with `ConcurrentWrite`, and nothing of theirs is joined.

A branch with a `when:` condition that is false at the fork is skipped: an entry of kind
`skipped` (`p/b`) is committed for it before any branch starts, so a resumed run skips it
again without asking the condition twice; the join waits for the branches that ran.

Trace paths: branch `b` of step `p` runs its steps as `p/b/<step>`. A branch's committed
steps are restored on resume like any frame's, so a run killed mid-parallel re-runs no
finished branch step; the step's own entry (its join) is committed last."""

from __future__ import annotations

import asyncio
from typing import Any

from wfops.engine.errors import StepFailed
from wfops.engine.frame import Frame, replay_change, restore
from wfops.engine.plan import StepPlan
from wfops.engine.reducers import ReducerError
from wfops.engine.run import RunContext, Transition, now
from wfops.engine.types import TraceEntry
from wfops.model.paths import parse_save_target
from wfops.model.rules import concurrent_write_message, writes_conflict


class _BranchFailed(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _branches(run: RunContext, frame: Frame, sp: StepPlan, path: str, key: str,
              pending: list[TraceEntry]) -> dict[str, Frame]:
    found: dict[str, Frame] = {}
    for name in sorted(sp.branches):
        plan = sp.branches[name]
        prefix = f"{path}/{name}/"
        branch = Frame(plan, frame.input, prefix, f"{key}/{name}/", True, dict(frame.state), plan.start, log=[])
        trace = [e for e in pending if e.step.startswith(prefix)]
        if trace:
            restore(branch, trace)
        found[name] = branch
    return found


async def _run_all(run: RunContext, sp: StepPlan, branches: dict[str, Frame]) -> str | None:
    """Run the unfinished branches concurrently; the name of the branch whose failure stopped
    the others (`on_branch_error: fail`), else None."""

    async def one(name: str, branch: Frame) -> None:
        await run.run_frame(branch)
        if branch.error is not None and sp.on_branch_error == "fail":
            raise _BranchFailed(name)

    tasks = [asyncio.ensure_future(one(name, b)) for name, b in branches.items() if not b.done]
    try:
        await asyncio.gather(*tasks)
    except _BranchFailed as failed:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return failed.name
    except BaseException:
        # Cancelled, a timeout, or a store error: leave no branch running behind the caller's back.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return None


def _skip(run: RunContext, frame: Frame, sp: StepPlan, path: str, key: str, pending: list[TraceEntry],
          branches: dict[str, Frame]) -> list[str]:
    """The branches this execution skips (their `when:` is false), each with its `skipped` entry
    committed once: a resumed run reads the decision from the trace."""
    recorded = {e.step[len(path) + 1:] for e in pending if e.kind == "skipped"}
    skipped, entries = [], []
    scope = run.scope(frame, run.context(frame, path, 1, key)) if sp.when else None
    for name in sorted(sp.when):
        if name in recorded:
            skipped.append(name)
        elif scope is not None and not any(e.step.startswith(f"{path}/{name}/") for e in pending) \
                and not sp.when[name](scope):
            skipped.append(name)
            entries.append(run.entry(f"{path}/{name}", "skipped", 1, None, "skipped", None, [], None, None, now()))
    if entries:
        run.commit(entries)
    return skipped


async def run_parallel(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    visit = frame.visits.get(sp.id, 0) + 1
    path, key = frame.prefix + sp.id, f"{frame.key_prefix}{sp.id}#{visit}"
    started = now()
    branches = _branches(run, frame, sp, path, key, pending)
    skipped = _skip(run, frame, sp, path, key, pending, branches) if sp.when else []
    for name in skipped:
        del branches[name]
    shown: dict[str, Any] = {"branches": list(branches)}
    if skipped:
        shown["skipped"] = skipped
    try:
        if sp.timeout:
            stopped = await asyncio.wait_for(_run_all(run, sp, branches), sp.timeout)
        else:
            stopped = await _run_all(run, sp, branches)
    except TimeoutError:
        failure = StepFailed("Timeout", f"parallel step {path} timed out after {sp.timeout:g}s")
        return run.fail(frame, sp, path, failure, kind="parallel", input=shown, attempt=1, started=started)
    if stopped is not None:
        error = branches[stopped].error or {}
        failure = StepFailed(str(error.get("type")), f"branch {stopped}: {error.get('message')}")
        return run.fail(frame, sp, path, failure, kind="parallel", input=shown, attempt=1, started=started,
                        error=failure.as_error(str(error.get("step") or path)))
    outcomes = {name: ("failed" if b.error is not None else b.outcome or "ok") for name, b in branches.items()}
    outcomes.update(dict.fromkeys(skipped, "skipped"))
    try:
        target = run.route(sp, "ok", path)
        state, changes = _join(frame, branches, path)
        failed = [{"branch": name, "type": b.error.get("type"), "message": b.error.get("message"),
                   "step": b.error.get("step")} for name, b in branches.items() if b.error is not None]
        if failed and sp.errors:
            holder = Frame(frame.plan, frame.input, state=state)
            state, more = run.stage(holder, sp.errors, failed)
            changes += more
    except StepFailed as failure:
        return run.fail(frame, sp, path, failure, kind="parallel", input=shown, attempt=1, started=started)
    return Transition(run.entry(path, "parallel", 1, shown, "ok", outcomes, changes, target, None, started), state)


def _join(frame: Frame, branches: dict[str, Frame], path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The state at the fork with each finished branch's writes applied, in branch-name order."""
    joined = {name: b for name, b in branches.items() if b.error is None}  # a failed branch (collected) did not finish
    _refuse_concurrent_writes(frame, joined, path)
    state = frame.state.copy()
    changes: list[dict[str, Any]] = []
    for name, branch in joined.items():  # sorted by name
        for change in branch.log or []:
            try:
                replay_change(state, frame.plan, change)
            except ReducerError as exc:
                raise StepFailed("SaveError", f"joining branch {name} of {path}: {change['path']}: {exc}") from None
            changes.append(change)
    return state, changes


def _refuse_concurrent_writes(frame: Frame, branches: dict[str, Frame], path: str) -> None:
    """Two branches writing one field that no reducer merges would leave it to the branch whose
    name sorts last: a `ConcurrentWrite` failure instead (a workflow bug: `catch` does not take it)."""
    seen: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}  # field -> (branch, path, keys) of its writers
    for name, branch in branches.items():
        for change in dict.fromkeys(c["path"] for c in branch.log or []):
            field, keys = parse_save_target(change)
            reducer = frame.plan.reducer_names.get(field)
            for other, other_path, other_keys in seen.get(field, []):
                if other != name and writes_conflict(reducer, other_keys, keys):
                    raise StepFailed("ConcurrentWrite", concurrent_write_message(
                        field, reducer, f"branches `{other}` and `{name}` of parallel step `{path}`",
                        other_path, change), catchable=False)
            seen.setdefault(field, []).append((name, change, keys))
