"""The foreach step: items run serially or in parallel (bounded by `concurrency`); each
finished item is committed as its own trace entry `<step>[i]`, so a resumed run skips
the items already done. Results are kept in item order whatever order items finish in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NamedTuple

from wfops.engine.errors import StepFailed
from wfops.engine.frame import Frame
from wfops.engine.plan import StepPlan
from wfops.engine.run import RunContext, Transition, now
from wfops.engine.types import TraceEntry
from wfops.errors import UnstorableValue
from wfops.jsonvalues import described
from wfops.model.rules import concurrent_write_message, writes_conflict
from wfops.sources.base import step_context

#: What an item's call gave, before its entry is made: (its index in the list, path, attempt,
#: payload, outcome, output, error, started, extra). A plain tuple: one is made per item.
_Finished = tuple[int, str, int, Any, "str | None", Any, "dict[str, Any] | None", str, "dict[str, Any] | None"]


class _Mark(NamedTuple):
    """The fan-out's state before an item's `save_each` writes (what undoing them restores)."""

    state: dict[str, Any]
    written: int
    logged: int
    failed: int


Batch = list[tuple[_Finished, TraceEntry, _Mark | None]]


class _Group:
    """Group commit: the finished items of a parallel fan-out are committed together, in ONE
    transaction (each still its own trace entry): at the start of the next turn of the event
    loop, or at once by the item that fills the group (no slot free: waiting for the turn
    would add nothing). A slot is an item running or waiting for its commit: at most `slots`
    (the step's `concurrency`) at once, so a group holds at most that many, and an item's
    slot is not taken by another before its result is durable. A worker waits only for a
    free slot, not for its own item's commit: with a node that does not wait, one worker
    fills a group and commits it without a turn of the loop per item (it lets the loop turn
    once per group). A crash loses only items not committed yet, which a resume runs again."""

    def __init__(self, commit: Callable[[Batch], None], slots: int) -> None:
        self._commit = commit
        self.slots = slots
        self.running = 0  # items being run (started, not finished)
        self.batch: Batch = []
        # The workers waiting for a free slot, woken by the next commit.
        self._waiting: list[asyncio.Future[None]] = []
        self._flushing: asyncio.Handle | None = None  # the flush of `batch`, once scheduled
        # A scheduled flush's store error (a loop callback could only log it): the workers are
        # cancelled, and the fan-out raises it (`failed`).
        self.failed: BaseException | None = None
        self.workers: Sequence[asyncio.Future[None]] = ()
        # Made inside the fan-out's loop, which its items' tasks run on: asked once, since
        # `get_running_loop` makes a system call (getpid) each time.
        self._loop = asyncio.get_running_loop()

    def full(self) -> bool:
        """Whether no item may start now: `slots` items running or uncommitted."""
        return self.running + len(self.batch) >= self.slots

    async def slot(self) -> None:
        """Wait until an item may start (not `full`)."""
        while self.failed is None and self.full():
            free: asyncio.Future[None] = self._loop.create_future()
            self._waiting.append(free)
            await free
        if self.failed is not None:
            raise self.failed

    def add(self, item: _Finished, entry: TraceEntry, mark: _Mark | None) -> bool:
        """Add a finished item (no longer counted as running) to the group; True when it filled
        the group, which is then committed already (its store errors raised here)."""
        if self.failed is not None:
            raise self.failed
        batch = self.batch
        batch.append((item, entry, mark))
        if len(batch) >= self.slots:
            # No slot free, so nothing can join before the flush: done now, without the turn.
            if self._flushing is not None:
                self._flushing.cancel()
            self._flush(at_once=True)
            return True
        if len(batch) == 1:
            self._flushing = self._loop.call_soon(self._flush)
        return False

    def close(self) -> None:
        """Commit what is left, once every worker has ended (the foreach must not end before)."""
        if self.failed is not None:
            raise self.failed
        if self.batch:
            if self._flushing is not None:
                self._flushing.cancel()
            self._flush(at_once=True)

    def _flush(self, at_once: bool = False) -> None:
        batch, waiting, self.batch, self._waiting, self._flushing = self.batch, self._waiting, [], [], None
        try:
            if batch:
                self._commit(batch)
        except BaseException as exc:
            # A store error (or the process being stopped): the fan-out fails with it, through
            # the workers waiting for a slot and every later `add`, `slot` and `close`.
            self.failed = exc
            for free in waiting:
                if not free.done():
                    free.set_exception(exc)
            if at_once or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            for worker in self.workers:  # none goes on running items that could not be kept
                worker.cancel()
            return
        for free in waiting:
            if not free.done():  # its task was cancelled meanwhile: nothing waits for it
                free.set_result(None)


def _split_pending(path: str, pending: list[TraceEntry], retry_failed: bool
                   ) -> tuple[dict[int, TraceEntry], dict[int, list[TraceEntry]]]:
    """Finished items (their item entries) and the child-frame trace of unfinished ones.

    With `retry_failed` (`on_item_error: fail`), an item that failed is not finished: it
    failed the step, and resuming (a redrive) runs it again."""
    done: dict[int, TraceEntry] = {}
    children: dict[int, list[TraceEntry]] = {}
    cut = len(path) + 1
    for entry in pending:
        index_text, _, tail = entry.step[cut:].partition("]")
        if not index_text.isdigit():
            continue
        if tail:
            children.setdefault(int(index_text), []).append(entry)
        elif entry.kind == "item" and not (retry_failed and entry.error is not None):
            done[int(index_text)] = entry
    return done, children


async def run_foreach(run: RunContext, frame: Frame, sp: StepPlan, pending: list[TraceEntry]) -> Transition:
    visit = frame.visits.get(sp.id, 0) + 1
    path, key = frame.prefix + sp.id, f"{frame.key_prefix}{sp.id}#{visit}"
    started = now()
    # The scope of the `foreach:` list, and then of every item's `with:` (see `one`).
    scope = run.scope(frame, run.context(frame, path, 1, key))
    items = sp.foreach(scope) if sp.foreach else None
    if not isinstance(items, list):
        failure = StepFailed("NotAList", f"foreach of step {path} needs a list, got {described(items)}")
        return run.fail(frame, sp, path, failure, kind="foreach", input=None, attempt=1, started=started)
    clash = _clashing_save_each(frame, sp, path) if len(items) > 1 else None
    if clash is not None:
        return run.fail(frame, sp, path, clash, kind="foreach", input={"items": len(items)}, attempt=1,
                        started=started)
    done, children = _split_pending(path, pending, sp.on_item_error == "fail")
    run.step_started(path, "foreach", len(items), len(done))
    results: dict[int, Any] = {i: e.output for i, e in done.items() if e.error is None}
    errors: dict[int, dict[str, Any]] = {i: e.error for i, e in done.items() if e.error is not None}
    stopped = False  # no item starts any more (a failed item under `on_item_error: fail`, a failed save)
    # `save_each`: item i's result is written once items 0..i have all finished, so writes go
    # through the reducers in item order whatever order parallel items finish in. The writes
    # ride on the entry of the item that completed the run of finished items, so the
    # items already written on resume are exactly the leading finished ones.
    written = 0
    while written in done:
        written += 1
    save_failed: list[StepFailed] = []

    def flush() -> list[dict[str, Any]]:
        nonlocal written, stopped
        changes: list[dict[str, Any]] = []
        # A failed item under `on_item_error: fail` is never passed: a redrive runs it again.
        passable = errors if sp.on_item_error != "fail" else {}
        while written < len(items) and (written in results or written in passable) and not save_failed:
            if written in results:
                try:
                    frame.state, more = run.stage(frame, sp.save_each, results[written])
                except StepFailed as failure:
                    failure.message = f"item {written}: {failure.message}"
                    save_failed.append(failure)
                    stopped = True
                    break
                changes += more
            written += 1
        if frame.log is not None:
            frame.log.extend(changes)
        return changes

    def finish(item: _Finished) -> tuple[TraceEntry, _Mark | None]:
        """Record a finished item and make its entry (its `save_each` writes applied); the
        state as it was before those writes, to undo them should the entry not be stored
        (None without `save_each`: then an item writes nothing to undo)."""
        nonlocal stopped
        number, item_path, attempt, payload, outcome, output, error, started, extra = item
        if error is None:
            results[number] = output
        else:
            errors[number] = error
            if sp.on_item_error == "fail":
                stopped = True
        mark: _Mark | None = None
        changes: list[dict[str, Any]] = []
        if sp.save_each:
            mark = _Mark(frame.state, written, len(frame.log or []), len(save_failed))
            changes = flush()
        entry = run.entry(item_path, "item", attempt, payload, outcome, output, changes, None, error, started, extra)
        if error is not None:
            errors[number] = entry.error or error
        return entry, mark

    def undo(mark: _Mark | None) -> None:
        nonlocal written
        if mark is None:
            return
        frame.state, written = mark.state, mark.written
        if frame.log is not None:
            del frame.log[mark.logged:]
        del save_failed[mark.failed:]

    def commit_alone(item: _Finished, entry: TraceEntry, mark: _Mark | None) -> None:
        nonlocal stopped
        try:
            run.commit([entry])
        except UnstorableValue as exc:
            # Nothing of this commit was stored: undo its `save_each` writes, fail the item.
            undo(mark)
            results.pop(item[0], None)
            entry = run.unstorable(entry, exc)
            errors[item[0]] = entry.error or {}
            if sp.on_item_error == "fail":
                stopped = True
            entry.state_changes = flush() if sp.save_each else []
            run.commit([entry])

    def commit_group(batch: Batch) -> None:
        try:
            run.commit([entry for _, entry, _ in batch])  # one transaction, one row per item
            return
        except UnstorableValue:
            pass
        # Nothing of the group was stored: take back all its items and commit them one by
        # one, as if each had finished alone, so only the unstorable one fails.
        undo(batch[0][2])
        for item, _, _ in batch:
            results.pop(item[0], None)
            errors.pop(item[0], None)
        for item, _, _ in batch:
            commit_alone(item, *finish(item))

    workers = min(sp.concurrency or len(items), len(items))
    group = _Group(commit_group, workers) if sp.parallel and len(items) - len(done) > 1 else None

    run_id, workflow, deployment, key_head = run.run_id, frame.plan.name, run.deployment, f"{run.run_id}:{key}"

    async def one(index: int) -> None:
        if index in done or stopped:
            return
        if group is not None:
            if group.full():  # (asked first: most items find a slot, and need no coroutine for it)
                await group.slot()
                if stopped:
                    return
            group.running += 1
        item_path = f"{path}[{index}]"
        item_started = now()
        # `run.context(frame, item_path, 1, f"{key}[{index}]")`, its parts taken once per foreach.
        ctx = step_context(run_id, workflow, deployment, item_path, 1, f"{key_head}[{index}]")
        payload: Any = {}
        if sp.with_:
            # One scope for all items: what differs per item (its item, index and context, and
            # the state `save_each` may have changed) is set just before the evaluation, which
            # never waits, so the items of a parallel fan-out never see one another's.
            scope.state, scope.ctx, scope.item, scope.index = frame.state, ctx, items[index], index
            payload = sp.with_(scope)
        outcome, output, error, attempt, extra = None, None, None, 1, None
        try:
            if sp.uses is not None:
                outcome, output, attempt, extra = await run.call(sp, payload, ctx, item_started)
            else:
                outcome, output = await run.run_child(
                    sp.workflow or "", payload, prefix=item_path + "/", key_prefix=f"{key}[{index}]/",
                    in_foreach=True, trace=children.get(index), timeout=sp.timeout)
        except StepFailed as failure:
            attempt = max(attempt, failure.attempt)
            error = failure.as_error(failure.inner_step or item_path)
        item: _Finished = (index, item_path, attempt, payload, outcome, output, error, item_started, extra)
        if group is None:
            commit_alone(item, *finish(item))
            return
        group.running -= 1
        if group.add(item, *finish(item)):
            # It filled the group and committed it: let the loop turn once per group (a node that
            # never waits would otherwise keep it from everything else until the fan-out ends).
            await asyncio.sleep(0)

    async def all_items() -> None:
        if sp.parallel and items:
            # `concurrency` workers taking the next item in turn: as many tasks as may run at
            # once, not one per item waiting on a semaphore.
            todo = iter(range(len(items)))

            async def worker() -> None:
                for index in todo:
                    await one(index)

            tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
            if group is not None:
                group.workers = tasks
            try:
                await asyncio.gather(*tasks)
                if group is not None:
                    group.close()
            except BaseException:
                # A store error or cancellation: leave no item running behind the caller's back.
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if group is not None and group.failed is not None:
                    raise group.failed from None  # a scheduled commit's (it cancelled the workers)
                raise
        else:
            for index in range(len(items)):
                await one(index)

    with _calls_held(run, sp, len(items) - len(done)):
        await all_items()
    shown = {"items": len(items)}
    if save_failed:
        return run.fail(frame, sp, path, save_failed[0], kind="foreach", input=shown, attempt=1, started=started)
    if errors and sp.on_item_error == "fail":
        first = min(errors)
        failure = StepFailed(str(errors[first].get("type")), f"item {first}: {errors[first].get('message')}")
        return run.fail(frame, sp, path, failure, kind="foreach", input=shown, attempt=1, started=started)
    ordered = [results[i] for i in sorted(results)]
    try:
        target = run.route(sp, "ok", path)
        state, changes = run.stage(frame, sp.save, ordered, listwise=True)
        if sp.on_item_error == "collect" and sp.errors:
            collected = [{"index": i, "type": errors[i].get("type"), "message": errors[i].get("message")}
                         for i in sorted(errors)]
            holder = Frame(frame.plan, frame.input, state=state)
            state, more = run.stage(holder, sp.errors, collected)
            changes += more
    except StepFailed as failure:
        return run.fail(frame, sp, path, failure, kind="foreach", input=shown, attempt=1, started=started)
    return Transition(run.entry(path, "foreach", 1, shown, "ok", ordered, changes, target, None, started), state)


def _calls_held(run: RunContext, sp: StepPlan, calls: int) -> AbstractContextManager[Any]:
    """Around many items' calls, what the capability's source sets up for each call, held
    once for them all (a resolver with `calls_held(ref)`: a python node's guards)."""
    held = getattr(run.engine.resolver, "calls_held", None) if sp.uses is not None and calls > 1 else None
    return held(sp.uses) if held is not None else nullcontext()


def _clashing_save_each(frame: Frame, sp: StepPlan, path: str) -> StepFailed | None:
    """Items that would each write one field no reducer merges: refused before any item runs,
    so nothing of the fan-out is committed (a workflow bug: `catch` does not take it)."""
    for target in sp.save_each:
        reducer = frame.plan.reducer_names.get(target.field)
        if writes_conflict(reducer, target.keys, target.keys):
            return StepFailed("ConcurrentWrite", concurrent_write_message(
                target.field, reducer, f"items 0 and 1 of foreach step `{path}` (through `save_each`)",
                target.path, target.path), catchable=False)
    return None
