"""Sync work in a daemon thread of its own, awaited from the event loop.

A thread cannot be cancelled. Work stuck past its caller's patience keeps its thread, but
nobody waits for it: the awaiting task can be cancelled (a step's timeout), the event loop
closes without joining it (it is not in the loop's executor), and the interpreter exits
without joining it (it is a daemon). So no caller, CLI, MCP server or embedding program, is
held by a hung node or a capability call that never returns.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_daemon_thread(work: Callable[[], T], name: str) -> T:
    """`work()` in a daemon thread named `name`, with the caller's context variables."""
    import asyncio  # deferred: asyncio (~33 ms); validation imports python sources but never calls one

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():  # cancelled (a timeout, a client gone): nobody wants the value any more
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def target() -> None:
        try:
            result: tuple[bool, Any] = (True, context.run(work))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller, which judges it
            result = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed: the caller is long gone
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future


class DaemonPool:
    """Sync work on a bounded set of reused daemon threads, awaited from any event loop.

    Starting a thread per call costs more than a small node's work, so calls share at most
    `size` live workers, started as calls need them and kept waiting for the next. The
    bound counts live workers only: a call whose caller stopped waiting (a step's timeout,
    a cancelled run) while it ran gives up its worker's place, so a hung node never holds
    the pool (a new worker takes the place), and its thread, should it ever return, ends
    instead of serving again. A call still queued when its caller stops waiting is never
    run. Like `in_daemon_thread`, nothing is joined: not the loop, not the interpreter.
    """

    def __init__(self, size: int, name: str) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self.name = name
        self._lock = threading.Lock()
        self._reset()
        # A forked child has none of the parent's threads (a Dask worker, multiprocessing).
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        # Workers waiting for a job, not yet promised one; a plain count under `_lock` (a
        # `threading.Semaphore` is a condition in Python, paid twice per call).
        self._idle = 0
        self._live = 0
        self._started = 0

    @property
    def live(self) -> int:
        """Workers that serve calls now (idle or busy); a worker whose call was abandoned
        mid-run is not counted."""
        return self._live

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` on a worker, with the caller's context variables."""
        import asyncio  # deferred: asyncio (~33 ms); validation imports python sources but never calls one

        loop = asyncio.get_running_loop()
        job = _Job(work, contextvars.copy_context(), loop, loop.create_future())
        self._submit(job)
        try:
            return await job.future  # type: ignore[no-any-return]
        except BaseException:
            if job.future.cancelled() or not job.future.done():  # the caller stopped waiting
                self._abandon(job)
            raise

    def _submit(self, job: _Job) -> None:
        self._jobs.put(job)
        with self._lock:
            if self._idle:
                self._idle -= 1
                return  # a waiting worker takes it
            self._spawn_locked()

    def _spawn_locked(self) -> None:
        """Start a worker if the bound allows; called with the lock held."""
        if self._live >= self.size:
            return  # queued until a worker is free
        self._live += 1
        self._started += 1
        threading.Thread(target=self._serve, name=f"{self.name}-{self._started}", daemon=True).start()

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            job.abandoned = True
            if job.running:  # its worker is stuck with it: another takes its place
                self._live -= 1
                if not self._jobs.empty():
                    self._spawn_locked()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                skip = job.abandoned
                job.running = not skip
                if skip:
                    self._idle += 1
            if skip:
                continue
            result = job.execute()
            with self._lock:
                job.running = False
                if job.abandoned:
                    return  # its place was given to another worker
                # Idle before the caller hears back: a caller that calls again at once finds this worker.
                self._idle += 1
            job.deliver(result)


class _Job:
    __slots__ = ("abandoned", "context", "future", "loop", "running", "work")

    def __init__(self, work: Callable[[], Any], context: contextvars.Context, loop: Any, future: Any) -> None:
        self.work, self.context, self.loop, self.future = work, context, loop, future
        self.running = False
        self.abandoned = False

    def execute(self) -> tuple[bool, Any]:
        try:
            return True, self.context.run(self.work)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller, which judges it
            return False, exc

    def deliver(self, result: tuple[bool, Any]) -> None:
        _outbox(self.loop).post(self, result)

    def _settle(self, ok: bool, value: Any) -> None:
        if not self.future.done():  # cancelled: nobody wants the value any more
            if ok:
                self.future.set_result(value)
            else:
                self.future.set_exception(value)


class _Outbox:
    """Results on their way to one event loop, handed over in batches: the first result
    posted wakes the loop (`call_soon_threadsafe`, a write to its wake-up pipe), and the
    results posted before the loop has run that callback ride along with it. Sync nodes of
    a fan-out finish while the loop is busy with the others' results, so most need no
    wake-up of their own."""

    __slots__ = ("loop", "lock", "results", "waking", "__weakref__")

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.results: list[tuple[_Job, tuple[bool, Any]]] = []
        self.waking = False

    def post(self, job: _Job, result: tuple[bool, Any]) -> None:
        with self.lock:
            self.results.append((job, result))
            if self.waking:
                return
            self.waking = True
        try:
            self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop closed: the callers are long gone
            with self.lock:
                self.results.clear()
                self.waking = False

    def _drain(self) -> None:
        with self.lock:
            results, self.results = self.results, []
            self.waking = False
        for job, (ok, value) in results:
            job._settle(ok, value)


_outboxes: weakref.WeakKeyDictionary[Any, _Outbox] = weakref.WeakKeyDictionary()
_outboxes_lock = threading.Lock()
_last: _Outbox | None = None  # the outbox asked for last (it keeps its loop alive until another is asked for)


def _forget_outboxes() -> None:
    """A forked child has none of the parent's loops or workers, and maybe a lock held by a thread it lacks."""
    global _outboxes, _outboxes_lock, _last
    _outboxes, _outboxes_lock, _last = weakref.WeakKeyDictionary(), threading.Lock(), None


os.register_at_fork(after_in_child=_forget_outboxes)


def _outbox(loop: Any) -> _Outbox:
    last = _last
    if last is not None and last.loop is loop:  # the common case: one loop at a time, asked per result
        return last
    return _outbox_of(loop)


def _outbox_of(loop: Any) -> _Outbox:
    global _last
    found = _outboxes.get(loop)
    if found is None:
        with _outboxes_lock:
            found = _outboxes.get(loop)
            if found is None:
                found = _outboxes[loop] = _Outbox(loop)
    _last = found
    return found
