"""Fan-out: CPU per item of a parallel `foreach` over a python node, against `asyncio.gather`.

    python3 bench/bench_fanout.py [--repeat 5] [--smoke]

(`--smoke`: 20 items, concurrency 8, one repeat.)

In a generated project with two python nodes doing the same trivial work (`async def`
and plain `def`, pydantic models in and out), runs through `wfops.Project.run` (the
SQLite store, one committed trace entry per item, items that finish together in one
transaction) a `foreach` with `mode: parallel` over
N items at concurrency C, and, in the same process, `asyncio.gather` of the same async
function over the same N validated inputs behind a semaphore of C. Per item: (CPU of the
N-item run - CPU of a 0-item run) / N, so the run's fixed cost is left out; the gather
side is its CPU / N. CPU is `time.process_time()` (this process, all threads; "of it
kernel": the system time `resource.getrusage` counts in it; "sync node switches": its
context switches per item, voluntary and not, from `resource.getrusage`, each a thread
put to sleep and woken), wall `time.perf_counter()`;
medians and ranges of the repeats, each repeat the three sides run back to back so a load
spike hits all of them, and each ratio taken within one repeat
(its median and range over the repeats); the 1-minute load average beside each row.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from common import add_smoke

import wfops

NODES = '''
from pydantic import BaseModel

import wfops


class In(BaseModel):
    n: int


class Out(BaseModel):
    doubled: int


@wfops.node
async def twice(payload: In) -> Out:
    return Out(doubled=payload.n * 2)


@wfops.node
def twice_sync(payload: In) -> Out:
    return Out(doubled=payload.n * 2)
'''

FANOUT = """
name: fan-{node}-{concurrency}
input: {{type: object, properties: {{ns: {{type: array, items: {{type: integer}}}}}}}}
state: {{out: {{type: array}}}}
output: {{count: $state.out}}
steps:
  - id: each
    foreach: $input.ns
    uses: py.{node}
    with: {{n: $item}}
    mode: parallel
    concurrency: {concurrency}
    save: state.out
    next: end
"""


def make_project(root: Path, concurrencies: list[int]) -> None:
    (root / "workflows").mkdir(parents=True)
    (root / "deployments").mkdir()
    (root / "sources.yaml").write_text("sources:\n  py: {kind: python, module: fannodes}\n")
    (root / "fannodes.py").write_text(NODES)
    for node in ("twice", "twice_sync"):
        for c in concurrencies:
            (root / "workflows" / f"fan-{node}-{c}.yaml").write_text(FANOUT.format(node=node, concurrency=c))
            (root / "deployments" / f"fan-{node}-{c}.yaml").write_text(
                f"name: fan-{node}-{c}.local\nworkflow: fan-{node}-{c}\n")


class Cost(NamedTuple):
    """What some work cost: CPU, wall and the kernel's share of the CPU in seconds, and context switches."""

    cpu: float
    wall: float
    kernel: float
    switches: float

    def per(self, n: int, base: Cost | None = None) -> Cost:
        """Per item of `n`, less the `base` run's cost if given."""
        less = base or Cost(0, 0, 0, 0)
        return Cost(*((mine - theirs) / n for mine, theirs in zip(self, less, strict=True)))


def timed(work: Any) -> Cost:
    cpu, wall, before = time.process_time(), time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    work()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return Cost(time.process_time() - cpu, time.perf_counter() - wall, after.ru_stime - before.ru_stime,
                after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw)


def run_item_cost(project: wfops.Project, name: str, n: int) -> Cost:
    base = timed(lambda: project.run(name, input={"ns": []}))
    return timed(lambda: _checked(project.run(name, input={"ns": list(range(n))}), n)).per(n, base)


def _checked(run: Any, n: int) -> None:
    assert run.status == "completed" and len(run.output["count"]) == n, run.error


def gather_item_cost(n: int, concurrency: int) -> Cost:
    nodes = importlib.import_module("fannodes")
    inputs = [nodes.In(n=i) for i in range(n)]

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(payload: Any) -> Any:
            async with gate:
                return await nodes.twice(payload)

        await asyncio.gather(*(one(p) for p in inputs))

    return timed(lambda: asyncio.run(main())).per(n)


def spread(values: list[float], scale: float = 1e6, fmt: str = ".0f", unit: str = "") -> str:
    shown = [v * scale for v in values]
    return f"{statistics.median(shown):{fmt}}{unit} ({min(shown):{fmt}}-{max(shown):{fmt}})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    add_smoke(parser)
    args = parser.parse_args()
    sizes, concurrencies, repeat = ([20], [8], 1) if args.smoke else ([1000, 10000], [8, 32], args.repeat)
    with tempfile.TemporaryDirectory() as tmp_name:
        root = Path(tmp_name) / "proj"
        make_project(root, concurrencies)
        sys.path.insert(0, str(root))  # the gather side imports the same module
        with wfops.Project(root) as project:
            assert project.compile().written
            for c in concurrencies:  # warm: the gate record, the imports
                project.run(f"fan-twice-{c}.local", input={"ns": [1]})
                project.run(f"fan-twice_sync-{c}.local", input={"ns": [1]})
            print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; us per item: median (min-max) of",
                  repeat, "repeats; CPU of this process (all threads), and wall; ratios taken within each repeat\n")
            print("| items | concurrency | async node CPU | of it kernel | sync node CPU | asyncio.gather CPU "
                  "| async / gather | sync / async | sync node switches | async node wall | gather wall | load average |")
            print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for n in sizes:
                for c in concurrencies:
                    rows: dict[str, list[Cost]] = {"async": [], "sync": [], "gather": []}
                    loads = [os.getloadavg()[0]]
                    for _ in range(repeat):
                        rows["async"].append(run_item_cost(project, f"fan-twice-{c}.local", n))
                        rows["sync"].append(run_item_cost(project, f"fan-twice_sync-{c}.local", n))
                        rows["gather"].append(gather_item_cost(n, c))
                        loads.append(os.getloadavg()[0])
                    cpu = {k: [v.cpu for v in rows[k]] for k in rows}
                    wall = {k: [v.wall for v in rows[k]] for k in rows}
                    kernel = [v.kernel for v in rows["async"]]
                    over_gather = [a / g for a, g in zip(cpu["async"], cpu["gather"], strict=True)]
                    over_async = [s / a for s, a in zip(cpu["sync"], cpu["async"], strict=True)]
                    print(f"| {n:,} | {c} | {spread(cpu['async'])} | {spread(kernel)} | {spread(cpu['sync'])} "
                          f"| {spread(cpu['gather'])} "
                          f"| {spread(over_gather, 1, '.1f', 'x')} | {spread(over_async, 1, '.2f', 'x')} "
                          f"| {spread([v.switches for v in rows['sync']], 1, '.2f')} "
                          f"| {spread(wall['async'])} | {spread(wall['gather'])} "
                          f"| {min(loads):.1f}-{max(loads):.1f} |")


if __name__ == "__main__":
    main()
