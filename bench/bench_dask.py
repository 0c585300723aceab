"""A foreach on a Dask cluster: 400 items of a 100 ms python capability.

Three ways, in one run, on one cluster (a LocalCluster of 2 worker processes x 2 threads):
- wfops, local executor, `concurrency: 1` (the baseline a single runner gives);
- wfops, dask executor (`mode: parallel`, no concurrency limit: the cluster's 4 threads are the limit);
- raw Dask: `client.map` of a function with the same body, then `client.gather`.
wfops's per-item overhead on Dask = (foreach wall time - raw wall time) / items, where the
foreach wall time is its trace entry's `ended_at - started_at` (the run's start-up,
validation and the lock gate are outside it, as they are outside `client.map`).

Run: python3 bench/bench_dask.py [items] [repeats] [--smoke]   (needs the dask extra)
(`--smoke`: 8 items, one repeat.)
"""

from __future__ import annotations

import argparse
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
'''


def fan(concurrency: int | None) -> str:
    limit = f"\n    concurrency: {concurrency}" if concurrency else ""
    return f"""
name: fan{concurrency or ''}
input: {{type: object, required: [items], properties: {{items: {{type: array}}}}}}
state: {{out: {{type: array}}}}
output: {{count: $state.out}}
steps:
  - id: fan
    foreach: $input.items
    uses: ops.nap
    with: {{n: $item}}
    mode: parallel{limit}
    save: state.out
    next: end
"""


def raw_nap(n: int) -> dict[str, int]:
    """The node's body without wfops: what raw Dask runs."""
    time.sleep(NAP)
    return {"n": n}


def make_project(root: Path, address: str) -> Path:
    files = {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": OPS,
        "workflows/fan.yaml": fan(None),
        "workflows/fan1.yaml": fan(1),
        "deployments/dask.yaml": f"name: fan.dask\nworkflow: fan\nexecutor: {{kind: dask, address: '{address}'}}\n",
        "deployments/local1.yaml": "name: fan.local1\nworkflow: fan1\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    import wfops

    wfops.Project(root).compile()
    return root


def foreach_seconds(project: Any, deployment: str, items: list[int]) -> tuple[float, float]:
    """(the foreach's wall time, the CPU time of this process over the whole run)."""
    cpu = time.process_time()
    run = project.run(deployment, {"items": items})
    cpu = time.process_time() - cpu
    assert run.status == "completed", run.error
    entry = next(e for e in project.trace(run.run_id) if e.step == "fan")
    return (_ts(entry.ended_at) - _ts(entry.started_at)).total_seconds(), cpu


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def raw_seconds(client: Any, items: list[int]) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    results = client.gather(client.map(raw_nap, items, pure=False))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert [r["n"] for r in results] == items
    return elapsed, cpu


def main() -> None:
    import dask
    from distributed import Client, LocalCluster

    import wfops

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", type=int, nargs="?", default=400)
    parser.add_argument("repeats", type=int, nargs="?", default=3)
    add_smoke(parser)
    args = parser.parse_args()
    n, repeats = (8, 1) if args.smoke else (args.items, args.repeats)
    items = list(range(n))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client, tempfile.TemporaryDirectory() as tmp:
        project = wfops.Project(make_project(Path(tmp), cluster.scheduler_address))
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
