"""Server time of `wfops ui`'s pages: the runs list on a store of 100,000 runs, and the run
page of a run of 10,000 steps (docs/benchmarks/ui.md).

    python3 bench/bench_ui.py                # 100,000 runs, a 10,000-step run, 7 repeats
    python3 bench/bench_ui.py --smoke        # 300 runs, a 200-step run, one repeat

A real `wfops ui` process on a loopback port answers each request the page's script makes
(the JSON routes: the page shell and its static files are constant); the figure is the
wall time of each request as this client sees it, median of the repeats. The store is
filled through the store's own `import_run` (whole runs, one transaction each), copying a
real run of each deployment under new ids and creation times.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import add_smoke  # noqa: E402
from wfops.store import open_store  # noqa: E402
from wfops.store.rows import stamp  # noqa: E402

WFOPS = [sys.executable, "-m", "wfops"]
PROJECT = {
    "sources.yaml": "sources: {}\n",
    "workflows/hello.yaml": ("name: hello\ninput: {type: object, properties: {who: {type: string}}}\n"
                             "state: {said: {type: object}}\noutput: {said: $state.said}\nsteps:\n"
                             "  - {id: say, uses: std.echo, with: {value: $input.who}, save: state.said, next: check}\n"
                             "  - {id: check, uses: std.echo, with: {value: 1}, next: end}\n"),
    "workflows/boom.yaml": ("name: boom\nsteps:\n  - {id: explode, uses: std.fail, with: {message: no}, next: end}\n"),
    "workflows/many.yaml": ("name: many\ninput: {type: object, properties: {items: {type: array}}}\n"
                            "steps:\n  - {id: each, foreach: $input.items, uses: std.echo, with: {value: $item}, "
                            "save: state.out, next: end}\nstate: {out: {type: array}}\n"),
    "deployments/hello.yaml": "name: hello.local\nworkflow: hello\ninput: {who: ana}\n",
    "deployments/hello-ci.yaml": "name: hello.ci\nworkflow: hello\ninput: {who: ci}\n",
    "deployments/boom.yaml": "name: boom.local\nworkflow: boom\n",
    "deployments/many.yaml": "name: many.local\nworkflow: many\n",
}


def wfops(root: Path, *args: str) -> str:
    done = subprocess.run([*WFOPS, *args], cwd=root, capture_output=True, text=True, timeout=3600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"wfops {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def make_project(root: Path, steps: int) -> tuple[list[str], str]:
    for rel, text in PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    wfops(root, "compile")
    seeds = [json.loads(wfops(root, "run", name, "--json"))["run_id"] for name in ("hello.local", "hello.ci", "boom.local")]
    items = json.dumps({"items": list(range(steps))})
    (root / "items.json").write_text(items)
    big = json.loads(wfops(root, "run", "many.local", "--input-file", "items.json", "--json"))["run_id"]
    return seeds, big


def fill(db: Path, seeds: list[str], count: int) -> None:
    """`count` runs copied from the seed runs, created one second apart, newest last."""
    store = open_store(db)
    try:
        originals = [(store.get_run(s), store.trace(s), store.run_workflows(s)) for s in seeds]
        start = datetime.now(UTC) - timedelta(seconds=count)
        for i in range(count):
            record, entries, workflows = originals[i % len(originals)]
            run_id = f"bench-{i:07d}"
            moment = stamp(start + timedelta(seconds=i))
            store.import_run(replace(record, snapshot=replace(record.snapshot, run_id=run_id),
                                     created_at=moment, updated_at=moment), entries, workflows)
    finally:
        store.close()


def timed(url: str, repeat: int) -> tuple[float, int]:
    """Median wall milliseconds of GET `url`, and the size of its answer."""
    times, size = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as answer:
            size = len(answer.read())
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    add_smoke(parser)
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.steps, args.repeat = 300, 200, 1
    with tempfile.TemporaryDirectory(prefix="wfops-bench-ui-") as tmp:
        root = Path(tmp)
        seeds, big = make_project(root, args.steps)
        started = time.perf_counter()
        fill(root / ".wfops" / "wfops.db", seeds, args.runs)
        print(f"store: {args.runs + 4} runs, filled in {time.perf_counter() - started:.1f} s; "
              f"run {big}: {args.steps + 1} trace entries")
        server = subprocess.Popen([*WFOPS, "ui", "--port", "0", "--read-only"], cwd=root,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            found = re.search(r"http://\S+/", server.stdout.readline())
            if found is None:
                raise SystemExit(f"wfops ui did not start: {server.communicate(timeout=30)}")
            base = found.group(0)
            last = max(0, args.runs - 50)
            cases = [
                ("runs list: first page (50 runs, counts)", "api/runs"),
                ("runs list: status=failed", "api/runs?status=failed"),
                ("runs list: deployment=hello.ci", "api/runs?deployment=hello.ci"),
                ("runs list: outcome + since", "api/runs?outcome=ok&since=" + quote((datetime.now(UTC) - timedelta(hours=1)).isoformat())),
                (f"runs list: last page (offset {last})", f"api/runs?offset={last}"),
                ("project (deployments for the filter)", "api/project"),
                (f"run page: run ({args.steps + 1} steps)", f"api/runs/{big}"),
                ("run page: graph with path taken", f"api/runs/{big}/graph"),
                ("run page: trace, first 2,000 entries", f"api/runs/{big}/trace?from=0&limit=2000"),
                ("run page: trace, whole (5,000 a request)", None),
            ]
            print("\n| request | median ms | answer bytes |\n| --- | ---: | ---: |")
            for label, path in cases:
                if path is None:
                    total, size = 0.0, 0
                    for start in range(0, args.steps + 1, 5000):
                        ms, got = timed(f"{base}api/runs/{big}/trace?from={start}&limit=5000", args.repeat)
                        total, size = total + ms, size + got
                    print(f"| {label} | {total:.1f} | {size} |")
                    continue
                ms, size = timed(base + path, args.repeat)
                print(f"| {label} | {ms:.1f} | {size} |")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
