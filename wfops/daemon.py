"""Sync work in a daemon thread of its own, awaited from the event loop.

A thread cannot be cancelled. Work stuck past its caller's patience keeps its thread, but
nobody waits for it: the awaiting task can be cancelled (a step's timeout), the event loop
closes without joining it (it is not in the loop's executor), and the interpreter exits
without joining it (it is a daemon). So no caller, CLI, MCP server or embedding program, is
held by a hung node or a capability call that never returns.
"""

from __future__ import annotations

import collections
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

    A thread put to sleep and woken again costs more than a small call (on these machines
    tens of µs of CPU: the futex, the context switch, the GIL handed across cores), so the
    pool wakes as few as it can:

    - Calls made in one turn of the event loop (a fan-out's items) are queued, and one
      worker is woken at the end of that turn, when the loop is about to wait and leaves
      the GIL free; it takes the queued calls one after another. A worker already awake
      takes new calls without being woken.
    - Calls that block (a node that sleeps, waits on I/O or computes without the GIL) must
      still run side by side, so the loop looks again `PATIENCE` seconds later: a call
      queued all that time means the awake workers are held, and a worker is woken for
      each call still queued, up to the bound.
    - Results go back to the loop in batches (`_Outbox`).
    """

    #: How long a queued call may wait for an awake worker before another is woken (s).
    PATIENCE = 0.002

    def __init__(self, size: int, name: str) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self.name = name
        self._reset()
        # A forked child has none of the parent's threads (a Dask worker, multiprocessing).
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()  # (new in a forked child: a thread it lacks may have held it)
        self._queued: collections.deque[_Job] = collections.deque()
        self._wakes: queue.SimpleQueue[None] = queue.SimpleQueue()  # one token per sleeping worker woken
        # Under `_lock`: workers asleep (waiting for a token), workers awake (running a call
        # or about to look for the next), workers alive, workers ever started, calls ever queued.
        self._idle = 0
        self._awake = 0
        self._live = 0
        self._started = 0
        self.queued_ever = 0

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
        self._queued.append(job)
        with self._lock:
            self.queued_ever += 1
            job.seq = self.queued_ever
            asleep = self._awake == 0
        outbox = _outbox(loop)
        outbox.waiting_on(self, kick=asleep)
        try:
            return await job.future  # type: ignore[no-any-return]
        except BaseException:
            if job.future.cancelled() or not job.future.done():  # the caller stopped waiting
                self._abandon(job)
            raise
        finally:
            outbox.in_flight -= 1

    def _kick(self) -> None:
        """At the end of the turn that queued calls: wake a worker if none is awake to take them."""
        with self._lock:
            if self._queued and not self._awake:
                self._wake_locked(1)

    def _look_again(self, seen: int) -> None:
        """`PATIENCE` after the loop saw `seen` calls queued: wake a worker for each call still
        queued if one of those (the oldest) is still waiting."""
        with self._lock:
            try:
                oldest = self._queued[0].seq  # (read, never taken: only workers take from the queue)
            except IndexError:
                return
            if oldest <= seen:
                self._wake_locked(len(self._queued))

    def _wake_locked(self, wanted: int) -> None:
        """Wake sleeping workers, or start new ones within the bound, for `wanted` calls; called with the lock held."""
        for _ in range(wanted):
            if self._idle:
                self._idle -= 1
                self._awake += 1
                self._wakes.put(None)
            elif self._live < self.size:
                self._live += 1
                self._awake += 1
                self._started += 1
                threading.Thread(target=self._serve, name=f"{self.name}-{self._started}", daemon=True).start()
            else:
                return  # queued until a worker is free

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            job.abandoned = True
            if job.running:  # its worker is stuck with it: another takes its place
                self._live -= 1
                self._awake -= 1
                if self._queued:
                    self._wake_locked(1)

    def _serve(self) -> None:
        queued, lock = self._queued, self._lock
        unsent: _Outbox | None = None  # where results went without waking the loop
        while True:
            try:
                job = queued.popleft()
            except IndexError:
                if unsent is not None:  # nothing more to run: the results go now
                    unsent.wake()
                    unsent = None
                with lock:
                    if queued:  # queued since: its caller saw this worker awake
                        continue
                    self._awake -= 1
                    self._idle += 1
                self._wakes.get()
                continue
            with lock:
                if job.abandoned:
                    continue
                job.running = True
            result = job.execute()
            with lock:
                job.running = False
                if job.abandoned:
                    return  # its place was given to another worker
            outbox = _outbox(job.loop)
            more = bool(queued)  # more to run first: the loop hears of this result with theirs
            outbox.post(job, result, wake=not more)
            if unsent is not None and unsent is not outbox:
                unsent.wake()
            unsent = outbox if more else None


class _Job:
    __slots__ = ("abandoned", "context", "future", "loop", "running", "seq", "work")

    def __init__(self, work: Callable[[], Any], context: contextvars.Context, loop: Any, future: Any) -> None:
        self.work, self.context, self.loop, self.future = work, context, loop, future
        self.running = False
        self.abandoned = False
        self.seq = 0

    def execute(self) -> tuple[bool, Any]:
        try:
            return True, self.context.run(self.work)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller, which judges it
            return False, exc

    def settle(self, ok: bool, value: Any) -> None:
        if not self.future.done():  # cancelled: nobody wants the value any more
            if ok:
                self.future.set_result(value)
            else:
                self.future.set_exception(value)


class _Outbox:
    """What one event loop shares with the pools' workers: the results on their way to it,
    and its side of the pools' wake-ups (see `DaemonPool`).

    Results are handed over in batches: a worker with more calls queued posts a result
    without waking the loop, and the first result posted with a wake-up
    (`call_soon_threadsafe`, a write to the loop's wake-up pipe) takes all those posted
    before the loop runs it. A result posted without a wake-up waits at most `PATIENCE`:
    while the loop has calls in a pool it looks at its outbox that often."""

    __slots__ = ("in_flight", "kicks", "loop", "lock", "looking", "results", "waking", "__weakref__")

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.results: list[tuple[_Job, tuple[bool, Any]]] = []
        self.waking = False
        # Touched by the loop's thread only: its calls not yet returned, the pools to kick at
        # the end of this turn, and the pools it looks at again (each with its calls queued then).
        self.in_flight = 0
        self.kicks: list[DaemonPool] = []
        self.looking: dict[DaemonPool, int] = {}

    def waiting_on(self, pool: DaemonPool, kick: bool) -> None:
        """The loop's call was queued on `pool` (`kick`: no worker was awake to take it)."""
        self.in_flight += 1
        if kick and pool not in self.kicks:
            if not self.kicks:
                self.loop.call_soon(self._kick)
            self.kicks.append(pool)
        if not self.looking:
            self.loop.call_later(pool.PATIENCE, self._look)
        if pool not in self.looking:
            self.looking[pool] = pool.queued_ever

    def _kick(self) -> None:
        kicks, self.kicks = self.kicks, []
        for pool in kicks:
            pool._kick()

    def _look(self) -> None:
        self._drain()
        looking, self.looking = self.looking, {}
        for pool, seen in looking.items():
            pool._look_again(seen)
        if self.in_flight > 0:
            self.looking = {pool: pool.queued_ever for pool in looking}
            self.loop.call_later(min(pool.PATIENCE for pool in looking), self._look)

    def post(self, job: _Job, result: tuple[bool, Any], wake: bool) -> None:
        with self.lock:
            self.results.append((job, result))
            if not wake or self.waking:
                return
            self.waking = True
        self._call_loop()

    def wake(self) -> None:
        """Have the loop take the results posted without a wake-up."""
        with self.lock:
            if not self.results or self.waking:
                return
            self.waking = True
        self._call_loop()

    def _call_loop(self) -> None:
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
            job.settle(ok, value)


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
