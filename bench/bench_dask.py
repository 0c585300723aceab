"""A foreach on a Dask cluster: 400 items of a 100 ms python capability.

Three ways, in one run, on one cluster (a LocalCluster of 2 worker processes x 2 threads):
- wfops, local executor, `concurrency: 1` (the baseline a single runner gives);
- wfops, dask executor (`mode: parallel`, no concurrency limit: the cluster's 4 threads are the limit);
- raw Dask: `client.map` of a function with the same body, then `client.gather`.
wfops's per-item overhead on Dask = (foreach wall time - raw wall time) / items, where the
foreach wall time is its trace entry's `ended_at - started_at` (the run's start-up,
validation and the lock gate are outside it, as they are outside `client.map`).

Then 1,000 trivial items (a node that returns its input), paired and interleaved with raw
`client.map` of the same body on the same cluster: wall time and driver CPU per item.

Run: python3 bench/bench_dask.py [items] [repeats] [--trivial N] [--trivial-repeats R] [--skip-nap] [--smoke]
(needs the dask extra; `--smoke`: 8 items and 20 trivial ones, one repeat each.)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from common import add_smoke

NAP = 0.1

OPS = f'''
import time

from pydantic import BaseModel

import wfops


class In(BaseModel):
    n: int


class Out(BaseModel):
    n: int


@wfops.node
def nap(payload: In) -> Out:
    time.sleep({NAP})
    return Out(n=payload.n)


@wfops.node
def trivial(payload: In) -> Out:
    return Out(n=payload.n)
'''


def fan(concurrency: int | None, uses: str = "nap", name: str = "") -> str:
    limit = f"\n    concurrency: {concurrency}" if concurrency else ""
    return f"""
name: {name or f"fan{concurrency or ''}"}
input: {{type: object, required: [items], properties: {{items: {{type: array}}}}}}
state: {{out: {{type: array}}}}
output: {{count: $state.out}}
steps:
  - id: fan
    foreach: $input.items
    uses: ops.{uses}
    with: {{n: $item}}
    mode: parallel{limit}
    save: state.out
    next: end
"""


def raw_nap(n: int) -> dict[str, int]:
    """The node's body without wfops: what raw Dask runs."""
    time.sleep(NAP)
    return {"n": n}


def raw_trivial(n: int) -> dict[str, int]:
    return {"n": n}


def make_project(root: Path, address: str) -> Path:
    files = {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": OPS,
        "workflows/fan.yaml": fan(None),
        "workflows/fan1.yaml": fan(1),
        "deployments/dask.yaml": f"name: fan.dask\nworkflow: fan\nexecutor: {{kind: dask, address: '{address}'}}\n",
        "deployments/local1.yaml": "name: fan.local1\nworkflow: fan1\n",
        "workflows/tiny.yaml": fan(None, "trivial", "tiny"),
        "deployments/tiny.yaml": f"name: tiny.dask\nworkflow: tiny\nexecutor: {{kind: dask, address: '{address}'}}\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    import wfops

    wfops.Project(root).compile()
    return root


def foreach_seconds(project: Any, deployment: str, items: list[int]) -> tuple[float, float]:
    """(the foreach's wall time, the CPU time of this process over the whole run)."""
    cpu = process_cpu()
    run = project.run(deployment, {"items": items})
    cpu = process_cpu() - cpu
    assert run.status == "completed", run.error
    entry = next(e for e in project.trace(run.run_id) if e.step == "fan")
    return (_ts(entry.ended_at) - _ts(entry.started_at)).total_seconds(), cpu


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def process_cpu() -> float:
    """CPU seconds of this process, user + system (`resource.getrusage`): the driver, and the
    LocalCluster's scheduler, which runs in it."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raw_seconds(client: Any, items: list[int], function: Any = raw_nap) -> tuple[float, float]:
    start, cpu = time.perf_counter(), process_cpu()
    results = client.gather(client.map(function, items, pure=False))
    elapsed, cpu = time.perf_counter() - start, process_cpu() - cpu
    assert [r["n"] for r in results] == items
    return elapsed, cpu


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return f"median {fmt.format(statistics.median(values))} (range {fmt.format(min(values))} .. {fmt.format(max(values))})"


def trivial_case(project: Any, client: Any, n: int, repeats: int) -> None:
    """`n` trivial items: per-call round trips, not the work, set the time. wfops's wall time
    is the foreach's (its trace entry), as in the 100 ms case; the whole `Project.run`'s
    (start-up, gate, the store's commits) is shown beside it, and its CPU is what is compared."""
    items = list(range(n))
    foreach_seconds(project, "tiny.dask", items[:8])
    raw_seconds(client, items[:8], raw_trivial)
    walls: list[tuple[float, float]] = []
    whole: list[float] = []
    cpus: list[tuple[float, float]] = []
    for _ in range(repeats):  # paired and interleaved: raw, wfops, raw, wfops ...
        raw = raw_seconds(client, items, raw_trivial)
        start = time.perf_counter()
        on_dask = foreach_seconds(project, "tiny.dask", items)
        whole.append(time.perf_counter() - start)
        walls.append((raw[0], on_dask[0]))
        cpus.append((raw[1], on_dask[1]))
    ratio = [w / r for r, w in walls]
    extra_cpu = [(w - r) / n * 1e3 for r, w in cpus]
    print(f"\n{n} trivial items (load average {os.getloadavg()[0]:.2f}); repeats: {repeats}")
    print(f"raw Dask client.map wall   : {spread([r for r, _ in walls])} s")
    print(f"wfops on Dask foreach wall : {spread([w for _, w in walls])} s")
    print(f"wfops whole Project.run    : {spread(whole)} s")
    print(f"wall ratio wfops / raw     : {spread(ratio, '{:.2f}')} x   (target <= 1.2)")
    print(f"whole run / raw            : {spread([w / r for (r, _), w in zip(walls, whole, strict=True)], '{:.2f}')} x")
    print(f"raw Dask CPU per item      : {spread([r / n * 1e3 for r, _ in cpus])} ms")
    print(f"wfops CPU per item         : {spread([w / n * 1e3 for _, w in cpus])} ms")
    print(f"driver CPU per item, extra : {spread(extra_cpu)} ms   (target <= 0.5)")


def main() -> None:
    import dask
    from distributed import Client, LocalCluster

    import wfops

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", type=int, nargs="?", default=400)
    parser.add_argument("repeats", type=int, nargs="?", default=3)
    parser.add_argument("--trivial", type=int, default=1000, help="items of the trivial case (0: skip it)")
    parser.add_argument("--trivial-repeats", type=int, default=7)
    parser.add_argument("--skip-nap", action="store_true", help="only the trivial case")
    add_smoke(parser)
    args = parser.parse_args()
    n, repeats = (8, 1) if args.smoke else (args.items, args.repeats)
    trivial, trivial_repeats = (20, 1) if args.smoke else (args.trivial, args.trivial_repeats)
    items = list(range(n))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client, tempfile.TemporaryDirectory() as tmp:
        project = wfops.Project(make_project(Path(tmp), cluster.scheduler_address))
        if trivial:
            trivial_case(project, client, trivial, trivial_repeats)
        if args.skip_nap:
            return
        print()
        # Warm: workers import the project module and pydantic once, and the function.
        foreach_seconds(project, "fan.dask", items[:8])
        raw_seconds(client, items[:8])
        local1 = foreach_seconds(project, "fan.local1", items)[0]
        on_dask: list[tuple[float, float]] = []
        raw: list[tuple[float, float]] = []
        for _ in range(repeats):  # interleaved: a noisy neighbour hits both alike
            raw.append(raw_seconds(client, items))
            on_dask.append(foreach_seconds(project, "fan.dask", items))
    per_item = [(w[0] - r[0]) / n * 1e3 for w, r in zip(on_dask, raw, strict=True)]
    cpu_per_item = [(w[1] - r[1]) / n * 1e3 for w, r in zip(on_dask, raw, strict=True)]
    raw_wall, dask_wall = [r[0] for r in raw], [w[0] for w in on_dask]
    print(f"items: {n} x {NAP * 1e3:.0f} ms; cluster: 2 workers x 2 threads; repeats: {repeats}")
    print(f"wfops local, concurrency 1 : {local1:7.2f} s")
    print(f"raw Dask client.map        : {statistics.median(raw_wall):7.2f} s  (min {min(raw_wall):.2f})")
    print(f"wfops on Dask              : {statistics.median(dask_wall):7.2f} s  (min {min(dask_wall):.2f})")
    print(f"speed-up over local c=1    : {local1 / statistics.median(dask_wall):7.2f} x")
    print(f"wfops overhead per item    : {statistics.median(per_item):7.3f} ms wall  "
          f"(each run: {', '.join(f'{p:.3f}' for p in per_item)})")
    # The driver process (with the LocalCluster's scheduler in it): what wfops costs per item
    # in CPU beyond raw Dask, whole run included (validation, gate, store commits, one task each).
    print(f"driver CPU per item, extra : {statistics.median(cpu_per_item):7.3f} ms  "
          f"(each run: {', '.join(f'{p:.3f}' for p in cpu_per_item)})")


if __name__ == "__main__":
    main()
