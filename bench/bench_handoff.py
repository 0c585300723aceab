"""The thread hand-off a sync node pays: CPU per call of a trivial sync function run from
asyncio on another thread, against the same function as a coroutine that never waits.

    python3 bench/bench_handoff.py [--repeat 5] [--smoke]

(`--smoke`: 200 calls at concurrency 8, one repeat.)

No wfops engine, store or trace here: N calls of the fan-out benchmark's node body (a
pydantic model in, one out) behind a semaphore of C, in one event loop, four ways:

- **inline**: `async def`, awaited; it never waits, so its task never sleeps (what an
  async node costs the loop, less wfops's own work per item);
- **wfops pool**: `wfops.daemon.DaemonPool.run`, the bounded pool sync nodes run on;
- **run_in_executor**: asyncio's own hand-off, a `ThreadPoolExecutor` of C workers;
- **batched floor**: the cheapest hand-off this script knows: one worker thread, the calls
  of one loop turn handed over as one batch and their results back as one. It runs blocking
  calls one after another and cannot cut one at a timeout, so a workflow engine cannot use
  it; it is here to measure what crossing to another thread costs at the least.

Per call: CPU (`time.process_time()`, all threads) / N; each repeat runs the four back to
back and each "extra" (a way's CPU per call less inline's) is taken within one repeat;
medians and ranges of the repeats.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import statistics
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from common import add_smoke
from pydantic import BaseModel

from wfops.daemon import DaemonPool


class In(BaseModel):
    n: int


class Out(BaseModel):
    doubled: int


def twice(payload: In) -> Out:
    return Out(doubled=payload.n * 2)


async def twice_async(payload: In) -> Out:
    return Out(doubled=payload.n * 2)


class BatchedFloor:
    """One worker; the calls of one loop turn go over as one batch, their results come back as one."""

    def __init__(self) -> None:
        self._batches: queue.SimpleQueue[list[tuple[Callable[[], Any], asyncio.Future[Any]]]] = queue.SimpleQueue()
        self._pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        threading.Thread(target=self._serve, daemon=True).start()

    def run(self, work: Callable[[], Any]) -> asyncio.Future[Any]:
        loop = self._loop = asyncio.get_running_loop()
        future = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((work, future))
        return future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        self._batches.put(batch)

    def _serve(self) -> None:
        while True:
            batch = self._batches.get()
            results = [(future, *_outcome(work)) for work, future in batch]
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._settle, results)

    @staticmethod
    def _settle(results: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
        for future, ok, value in results:
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


def _outcome(work: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, work()
    except Exception as exc:  # noqa: BLE001 - handed to the awaiting caller
        return False, exc


def ways(concurrency: int) -> dict[str, Callable[[In], Awaitable[Out]]]:
    pool = DaemonPool(64, "bench-node")
    executor = ThreadPoolExecutor(concurrency)
    floor = BatchedFloor()

    async def in_executor(payload: In) -> Out:
        return await asyncio.get_running_loop().run_in_executor(executor, twice, payload)

    return {
        "inline": twice_async,
        "wfops pool": lambda payload: pool.run(lambda: twice(payload)),
        "run_in_executor": in_executor,
        "batched floor": lambda payload: floor.run(lambda: twice(payload)),
    }


def cpu_per_call(call: Callable[[In], Awaitable[Out]], n: int, concurrency: int) -> float:
    payloads = [In(n=i) for i in range(n)]

    async def main() -> list[Out]:
        slots = asyncio.Semaphore(concurrency)

        async def one(payload: In) -> Out:
            async with slots:
                return await call(payload)

        return await asyncio.gather(*(one(payload) for payload in payloads))

    started = time.process_time()
    outs = asyncio.run(main())
    spent = time.process_time() - started
    if [out.doubled for out in outs] != [2 * i for i in range(n)]:
        raise SystemExit("error: a way returned wrong results")
    return spent / n


def spread(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e6:.1f} ({min(values) * 1e6:.1f}-{max(values) * 1e6:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    add_smoke(parser)
    args = parser.parse_args()
    sizes = [(200, 8)] if args.smoke else [(10_000, 8), (10_000, 32)]
    repeat = 1 if args.smoke else args.repeat
    print("| calls | concurrency | way | CPU per call, µs | extra over inline, µs |\n| ---: | ---: | --- | ---: | ---: |")
    for n, concurrency in sizes:
        named = ways(concurrency)
        for call in named.values():  # warm: threads started, code paths taken once
            cpu_per_call(call, min(n, 200), concurrency)
        costs: dict[str, list[float]] = {name: [] for name in named}
        for _ in range(repeat):
            for name, call in named.items():
                costs[name].append(cpu_per_call(call, n, concurrency))
        for name in named:
            extra = [cost - inline for cost, inline in zip(costs[name], costs["inline"], strict=True)]
            shown = "" if name == "inline" else spread(extra)
            print(f"| {n:,} | {concurrency} | {name} | {spread(costs[name])} | {shown} |", flush=True)


if __name__ == "__main__":
    main()
