"""The step cache's cost and gain: a hit against a bare committed step, and the whole time of
a second run of the worked example (meeting-report) with caching on.

Run: python3 bench/bench_cache.py [--steps N] [--repeat R] [--smoke]
(`--smoke`: 20 steps, one repeat.)

1. In process, on a real SQLite store: a chain of N `std.echo` steps, each with its own
   input, run (a) without `cache:` (every step a call and a commit), (b) with `cache: true`
   on a fresh store (every step a lookup that misses, a call, a commit that writes the entry)
   and (c) again (every step a lookup that hits, and a commit). Per step, CPU and wall.
2. Whole `wfops run meeting-report.local` processes in a copy of the repository's own
   project with `cache: true` on its `extract` and `render` steps: the second run with the
   cache on, against the same run with `--no-cache`. CPU of the whole process and wall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_smoke, child_cpu

from wfops.engine.engine import Engine
from wfops.model.objects import Workflow
from wfops.model.plain import validated
from wfops.sources.registry import BoundResolver
from wfops.sources.std import StdSource
from wfops.store.sqlite import SqliteStore

REPO = Path(__file__).resolve().parent.parent


def chain(n: int, *, cached: bool) -> Workflow:
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": f"v{i}"}, "save": {"value": "state.v"},
              "next": f"s{i + 1}" if i + 1 < n else "end", **({"cache": True} if cached else {})}
             for i in range(n)]
    made = validated("workflow", {"name": "chain", "state": {"v": {}}, "steps": steps})
    assert isinstance(made, Workflow)
    return made


def per_step(store: SqliteStore, workflow: Workflow, n: int, *, cache: bool) -> tuple[float, float]:
    """(CPU, wall) microseconds per step of one run of `workflow` on `store`."""
    engine = Engine({"chain": workflow}, BoundResolver({"std": StdSource()}), store,
                    cache=store if cache else None)
    cpu, wall = time.process_time(), time.perf_counter()
    snap = asyncio.run(engine.start("chain", {}))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert snap.status == "completed", snap.error
    return cpu / n * 1e6, wall / n * 1e6


def in_process(n: int, repeat: int) -> dict[str, list[tuple[float, float]]]:
    found: dict[str, list[tuple[float, float]]] = {"bare": [], "miss": [], "hit": []}
    plain, cached = chain(n, cached=False), chain(n, cached=True)
    for _ in range(repeat):  # interleaved: a noisy neighbour hits every case alike
        with tempfile.TemporaryDirectory() as tmp:
            store = SqliteStore(Path(tmp) / "wfops.db")
            try:
                per_step(store, plain, min(n, 10), cache=False)  # warm: plans, statements
                found["bare"].append(per_step(store, plain, n, cache=False))
                found["miss"].append(per_step(store, cached, n, cache=True))
                found["hit"].append(per_step(store, cached, n, cache=True))
            finally:
                store.close()
    return found


def example_project(root: Path) -> Path:
    for name in ("sources.yaml", "workflows", "deployments", "examples"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    flow = root / "workflows" / "meeting-report.yaml"
    text = flow.read_text()
    for step in ("extract", "render"):  # pure functions of their input; `read` reads a file
        text = text.replace(f"  - id: {step}\n", f"  - id: {step}\n    cache: true\n", 1)
    flow.write_text(text)
    wfops(root, "compile")
    return root


def wfops(root: Path, *args: str) -> tuple[float, float, dict]:
    """(CPU of the whole process, wall seconds, its JSON output)."""
    cpu, wall = child_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "wfops", *args, "--project", str(root)], capture_output=True,
                          text=True, cwd=root)
    cpu, wall = child_cpu() - cpu, time.perf_counter() - wall
    if done.returncode != 0:
        raise SystemExit(f"wfops {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return cpu, wall, json.loads(done.stdout) if done.stdout.strip().startswith(("{", "[")) else {}


def whole_runs(repeat: int) -> tuple[dict[str, list[tuple[float, float]]], int]:
    found: dict[str, list[tuple[float, float]]] = {"cached": [], "no-cache": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = example_project(Path(tmp))
        wfops(root, "run", "meeting-report.local", "--json")  # fills the cache and the gate record
        for _ in range(repeat):
            cpu, wall, run = wfops(root, "run", "meeting-report.local", "--json")
            found["cached"].append((cpu, wall))
            cpu, wall, _ = wfops(root, "run", "meeting-report.local", "--json", "--no-cache")
            found["no-cache"].append((cpu, wall))
        _, _, steps = wfops(root, "runs", "trace", run["run_id"], "--json")
        served = sum(1 for e in steps if e.get("cached")) if isinstance(steps, list) else 0
    return found, served


def median(pairs: list[tuple[float, float]], which: int) -> float:
    return statistics.median(p[which] for p in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    add_smoke(parser)
    args = parser.parse_args()
    n, repeat = (20, 1) if args.smoke else (args.steps, args.repeat)
    found = in_process(n, repeat)
    print(f"in process, SQLite store, {n} std.echo steps, medians of {repeat}")
    print("| step | CPU us/step | wall us/step |\n| --- | ---: | ---: |")
    for case, label in (("bare", "bare committed call"), ("miss", "cached, miss (call + entry written)"),
                        ("hit", "cached, hit (lookup + commit)")):
        print(f"| {label} | {median(found[case], 0):.0f} | {median(found[case], 1):.0f} |")
    runs, served = whole_runs(repeat)
    print(f"\nwhole `wfops run meeting-report.local`, second run ({served} steps served), medians of {repeat}")
    print("| run | CPU ms | wall ms |\n| --- | ---: | ---: |")
    for case in ("cached", "no-cache"):
        print(f"| {case} | {median(runs[case], 0) * 1000:.0f} | {median(runs[case], 1) * 1000:.0f} |")


if __name__ == "__main__":
    main()
