"""The pool sync nodes run on: bounded, reused, and never held by a call nobody waits for.

Real threads and a real event loop; each blocking job waits on an Event the test sets, so
nothing depends on timing (the short `wait_for` timeouts only make a caller give up)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from wfops.daemon import DaemonPool

WHO = contextvars.ContextVar("WHO", default="nobody")


def test_sequential_calls_reuse_one_worker() -> None:
    pool = DaemonPool(4, "t-seq")

    async def main() -> list[threading.Thread]:
        return [await pool.run(threading.current_thread) for _ in range(20)]

    threads = asyncio.run(main())
    assert len({id(t) for t in threads}) == 1 and threads[0].daemon and threads[0].name == "t-seq-1"
    assert pool.live == 1


def test_concurrent_calls_never_use_more_workers_than_the_bound() -> None:
    pool = DaemonPool(4, "t-bound")
    release = threading.Event()
    lock = threading.Lock()
    running = [0, 0]  # now, most at once
    seen: list[threading.Thread] = []

    def job() -> int:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
            seen.append(threading.current_thread())
        release.wait(60)
        with lock:
            running[0] -= 1
        return 1

    async def main() -> int:
        calls = asyncio.gather(*(pool.run(job) for _ in range(20)))
        while running[0] < 4:  # every worker the bound allows is busy
            await asyncio.sleep(0.01)
        release.set()
        return sum(await calls)

    assert asyncio.run(main()) == 20
    assert running[1] == 4 and len({id(t) for t in seen}) == 4 and pool.live == 4


def test_a_timed_out_call_gives_its_place_to_a_new_worker() -> None:
    pool = DaemonPool(1, "t-stuck")
    stuck, started = threading.Event(), threading.Event()
    ran_queued = threading.Event()

    def hang() -> None:
        started.set()
        stuck.wait(60)

    async def main() -> str:
        hung = asyncio.ensure_future(pool.run(hang))
        while not started.is_set():
            await asyncio.sleep(0.01)
        # Queued behind the hung call (the one worker is busy): the caller gives up; it never runs.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.run(ran_queued.set), 0.05)
        hung.cancel()  # as a step's timeout cancels its call
        with pytest.raises(asyncio.CancelledError):
            await hung
        # (a hang guard, not a speed bound: a pool still counting the hung worker never serves it)
        return await asyncio.wait_for(pool.run(lambda: threading.current_thread().name), 30)

    try:
        # The hung worker no longer counts: a new one took its place (passing over the
        # abandoned queued call) and served the next call.
        assert asyncio.run(main()) == "t-stuck-2"
        assert not ran_queued.is_set() and pool.live == 1
    finally:
        stuck.set()


def test_errors_and_context_reach_the_caller() -> None:
    pool = DaemonPool(2, "t-ctx")

    def boom() -> None:
        raise ValueError("from the node")

    async def main() -> str:
        WHO.set("the caller")
        with pytest.raises(ValueError, match="from the node"):
            await pool.run(boom)
        return await pool.run(WHO.get)

    assert asyncio.run(main()) == "the caller"
    assert pool.live == 1  # a failed call keeps its worker


def test_a_pool_serves_one_event_loop_after_another() -> None:
    # Project.run drives each run on a fresh loop; the workers outlive each.
    pool = DaemonPool(2, "t-loops")
    names = {asyncio.run(pool.run(lambda: threading.current_thread().name)) for _ in range(3)}
    assert names == {"t-loops-1"}


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError):
        DaemonPool(0, "t-none")


NODES = '''
import threading

from pydantic import BaseModel

import wfops


class In(BaseModel):
    n: int


class Out(BaseModel):
    thread: str


@wfops.node
def where(payload: In) -> Out:
    return Out(thread=threading.current_thread().name)
'''

FANOUT = """
name: fan
input: {type: object, properties: {ns: {type: array, items: {type: integer}}}}
state: {threads: {type: array}}
output: {threads: $state.threads}
steps:
  - id: each
    foreach: $input.ns
    uses: py.where
    with: {n: $item}
    mode: parallel
    concurrency: 4
    save: state.threads
    next: end
"""


def test_a_sync_node_fan_out_runs_on_the_pool(tmp_path) -> None:
    import wfops
    from tests.conftest import write
    from wfops.sources.python import SYNC_NODES

    root = write(tmp_path, {"sources.yaml": "sources:\n  py: {kind: python, module: poolnodes}\n",
                            "poolnodes.py": NODES, "workflows/fan.yaml": FANOUT,
                            "deployments/fan.yaml": "name: fan.local\nworkflow: fan\n"})
    with wfops.Project(root) as project:
        assert project.compile().written
        run = project.run("fan.local", input={"ns": list(range(40))})
    names = {item["thread"] for item in run.output["threads"]}
    assert len(run.output["threads"]) == 40
    assert all(name.startswith("wfops-node-") for name in names)
    assert len(names) <= SYNC_NODES.live < 40  # workers reused, not a thread per call


def test_results_that_finish_while_the_loop_is_busy_share_one_wake_up() -> None:
    from wfops.daemon import _outbox

    pool = DaemonPool(4, "t-batch")
    release, lock = threading.Event(), threading.Lock()
    started = [0]

    def job() -> int:
        with lock:
            started[0] += 1
        release.wait(60)
        return 1

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        wakes: list[object] = []
        plain = loop.call_soon_threadsafe

        def counted(callback: object, *args: object, **kwargs: object) -> object:
            wakes.append(callback)
            return plain(callback, *args, **kwargs)  # type: ignore[arg-type]

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        calls = asyncio.gather(*(pool.run(job) for _ in range(4)))
        while started[0] < 4:
            await asyncio.sleep(0.01)
        release.set()
        # The loop is busy (this thread blocks it) while all four results are posted.
        outbox = _outbox(loop)
        for _ in range(60_000):  # a hang guard, not a speed bound
            if len(outbox.results) == 4:
                break
            time.sleep(0.001)
        return sum(await calls), len(wakes)

    assert asyncio.run(main()) == (4, 1)  # one wake-up of the loop for the four results
