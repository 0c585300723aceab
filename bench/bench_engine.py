"""Engine overhead per step: a linear chain of N `std.echo` steps with a no-op sink,
against a floor (a plain loop: call a function, merge its result into a dict, look up
the next step in a routing table). Run: python3 bench/bench_engine.py [N] [repeats] [--smoke]
(`--smoke`: 50 steps, one repeat.)"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from common import add_smoke

from wfops.engine.engine import Engine
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.model.objects import Workflow
from wfops.model.plain import validated
from wfops.sources.registry import BoundResolver
from wfops.sources.std import StdSource


class NoSink:
    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        return None


def chain(n: int) -> Workflow:
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": "$state.v"}, "save": {"value": "state.v"},
              "next": f"s{i + 1}" if i + 1 < n else "end"} for i in range(n)]
    made = validated("workflow", {"name": "chain", "state": {"v": {}}, "output": {"v": "$state.v"},
                                  "steps": steps})
    assert isinstance(made, Workflow)
    return made


def engine_us_per_step(n: int, secrets: dict[str, str] | None = None) -> float:
    engine = Engine({"chain": chain(n)}, BoundResolver({"std": StdSource()}), NoSink(), secrets=secrets)
    asyncio.run(engine.start("chain", {}))  # compile the plan, warm caches
    start = time.perf_counter()
    snap = asyncio.run(engine.start("chain", {}))
    elapsed = time.perf_counter() - start
    assert snap.status == "completed", snap.error
    return elapsed / n * 1e6


def floor_us_per_step(n: int) -> float:
    """The least a step can cost in this design: await an async capability, merge its output
    into state through the field's reducer, look the outcome up in a routing table."""

    async def echo(payload: dict[str, Any]) -> dict[str, Any]:
        return {"value": payload["value"]}

    def replace(old: Any, new: Any) -> Any:
        return new

    reducers = {"v": replace}
    routes = {f"s{i}": {"ok": f"s{i + 1}" if i + 1 < n else "end"} for i in range(n)}

    async def loop() -> dict[str, Any]:
        state: dict[str, Any] = {"v": 1}
        step = "s0"
        while step != "end":
            output = await echo({"value": state["v"]})
            state["v"] = reducers["v"](state.get("v"), output["value"])
            step = routes[step]["ok"]
        return state

    start = time.perf_counter()
    asyncio.run(loop())
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", type=int, nargs="?", default=2000)
    parser.add_argument("repeats", type=int, nargs="?", default=7)
    add_smoke(parser)
    args = parser.parse_args()
    n, repeats = (50, 1) if args.smoke else (args.steps, args.repeats)
    # Interleaved, so a noisy neighbour hits both sides alike; the minimum is the least
    # disturbed run (as timeit advises), the median is shown for spread.
    eng: list[float] = []
    flo: list[float] = []
    red: list[float] = []
    for _ in range(repeats):
        eng.append(engine_us_per_step(n))
        flo.append(floor_us_per_step(n))
        red.append(engine_us_per_step(n, {"TOKEN": "s3cr3t-value"}))
    print(f"steps: {n}, repeats: {repeats} (min / median)")
    print(f"engine: {min(eng):.1f} / {statistics.median(eng):.1f} us/step")
    print(f"floor:  {min(flo):.2f} / {statistics.median(flo):.2f} us/step")
    print(f"ratio:  {min(eng) / min(flo):.1f}x on minimums, {statistics.median(eng) / statistics.median(flo):.1f}x "
          "on medians (target <= 40x)")
    print(f"engine with one secret (every entry redacted): {min(red):.1f} / {statistics.median(red):.1f} us/step")


if __name__ == "__main__":
    main()
