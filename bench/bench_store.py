"""Durable step cost: wfops (engine + SQLite store, one commit per step) vs LangGraph + SqliteSaver.

Both sides run a linear chain of echo steps in their own fresh process, every step
checkpointed before the next starts:
- wfops: `wfops run <deployment> --json` on a generated project (std.echo chain);
- LangGraph: `StateGraph` of N nodes, `SqliteSaver` on a WAL + synchronous=NORMAL file,
  `durability="sync"`.

Figures per step:
- whole process: (median CPU time, user + system, of the process at N=600 minus that at
  N=100) / 500
  (CPU, not wall, time: this 2-core machine is shared, and CPU time is what a step costs
  whatever else runs), so start-up cancels
  out but everything that grows with the workflow (wfops: loading, validating and
  hashing the 600-step file; LangGraph: building the graph) is included;
- inside, wall: the execution only (wfops: first to last commit of a `wfops run`, read
  from the store's timestamps; LangGraph: the `invoke` call), divided by N;
- inside, CPU: process CPU time of the execution only (wfops: `Engine.start` with the
  SQLite store as its sink in a fresh process, first to last commit; LangGraph: the
  `invoke` call), divided by N.
Also the store bytes per step of a 600-step run whose state grows (an append reducer).

Run: python bench/bench_store.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime
from pathlib import Path

LONG, SHORT = 600, 100
LG_CPU: list[float] = []  # LangGraph's invoke CPU seconds at N=600
PAYLOAD = "x" * 64  # what each step of the growing run appends


def echo_chain(name: str, steps: int, *, grow: bool) -> str:
    if grow:
        head = [f"name: {name}", "input: {type: object}", "state: {log: {type: array, reducer: append}}",
                "output: {count: $state.log}", "steps:"]
    else:
        head = [f"name: {name}", "input: {type: object, properties: {value: {type: integer}}}",
                "state: {value: {type: integer}}", "output: {value: $state.value}", "steps:"]
    lines = head
    for i in range(1, steps + 1):
        nxt = "end" if i == steps else f"s{i + 1}"
        if grow:
            value = f"{{step: {i}, text: {PAYLOAD}}}"
            lines.append(f"  - {{id: s{i}, uses: std.echo, with: {{value: {value}}}, save: {{value: state.log}}, next: {nxt}}}")
        else:
            src = "$input.value" if i == 1 else "$state.value"
            lines.append(f"  - {{id: s{i}, uses: std.echo, with: {{value: {src}}}, save: {{value: state.value}}, next: {nxt}}}")
    return "\n".join(lines) + "\n"


def make_project(root: Path) -> None:
    (root / "workflows").mkdir(parents=True)
    (root / "deployments").mkdir()
    (root / "sources.yaml").write_text("sources: {}\n")
    for name, steps, grow in (("chain600", LONG, False), ("chain100", SHORT, False), ("grow600", LONG, True)):
        (root / "workflows" / f"{name}.yaml").write_text(echo_chain(name, steps, grow=grow))
        (root / "deployments" / f"{name}.yaml").write_text(
            f"name: {name}.local\nworkflow: {name}\ninput: {{value: 1}}\n" if not grow
            else f"name: {name}.local\nworkflow: {name}\n")
    wfops(root, "compile")


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wfops(root: Path, *args: str) -> tuple[float, str]:
    """(CPU seconds, user + system, of the whole child process; stdout)."""
    started = child_cpu()
    done = subprocess.run([sys.executable, "-m", "wfops", *args, "--project", str(root)],
                          capture_output=True, text=True, cwd=root)
    elapsed = child_cpu() - started
    if done.returncode != 0:
        raise SystemExit(f"wfops {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, done.stdout


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def wfops_run(root: Path, deployment: str) -> tuple[float, float, int]:
    """(whole-process seconds, inside seconds, steps) of one run."""
    wall, out = wfops(root, "run", deployment, "--json")
    run_id = json.loads(out)["run_id"]
    conn = sqlite3.connect(root / ".wfops" / "wfops.db")
    created, updated, steps = conn.execute(
        "SELECT created_at, updated_at, steps FROM runs WHERE id=?", (run_id,)).fetchone()
    conn.close()
    return wall, (_stamp(updated) - _stamp(created)).total_seconds(), steps


LANGGRAPH = textwrap.dedent('''
    import json, operator, sqlite3, sys, time
    from typing import Annotated, TypedDict
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    n, path, grow = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "grow"

    class S(TypedDict):
        value: int
        log: Annotated[list, operator.add]

    def make(i):
        if grow:
            return lambda s: {"log": [{"step": i, "text": "PAYLOAD"}]}
        return lambda s: {"value": s["value"]}

    g = StateGraph(S)
    for i in range(1, n + 1):
        g.add_node(f"s{i}", make(i))
    g.add_edge(START, "s1")
    for i in range(1, n):
        g.add_edge(f"s{i}", f"s{i + 1}")
    g.add_edge(f"s{n}", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    app = g.compile(checkpointer=SqliteSaver(conn))
    started, cpu = time.perf_counter(), time.process_time()
    app.invoke({"value": 1, "log": []}, {"configurable": {"thread_id": "t"}, "recursion_limit": n + 10},
               durability="sync")
    inside, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    print(json.dumps({"inside": inside, "cpu": cpu}))
''').replace("PAYLOAD", PAYLOAD)


# The same engine + SQLite store the CLI runs, driven in a fresh process, timed around
# the run only (after validation and the lock gate).
WFOPS_INSIDE = textwrap.dedent('''
    import asyncio, json, sys, time
    from pathlib import Path
    from wfops.compiler.validate import validate_project
    from wfops.engine.engine import Engine
    from wfops.lock.gate import check_deployment
    from wfops.runner.execute import new_run_id
    from wfops.sources.registry import BoundResolver
    from wfops.store import open_store

    root, db = Path(sys.argv[1]), sys.argv[2]
    validation = validate_project(root)
    gate = check_deployment(validation, "chain600.local")
    store = open_store(db)
    run_id = new_run_id()
    store.begin_run(run_id, artifacts=gate.artifacts, normalized=gate.normalized, meta={})

    class Timed:
        """The store as sink, noting CPU time at the first and the last commit (as the CLI's
        created_at / updated_at do for wall time), so one-off set-up is not counted."""

        marks: list = []

        def commit(self, run, entries):
            store.commit(run, entries)
            self.marks.append(time.process_time())

    sink = Timed()
    engine = Engine(gate.workflows, BoundResolver(validation.sources, gate.bindings), sink,
                    artifacts=gate.artifacts)
    snapshot = asyncio.run(engine.start("chain600", {"value": 1}, run_id=run_id))
    assert snapshot.status == "completed" and store.get_run(run_id).steps == 600
    print(json.dumps({"cpu": sink.marks[-1] - sink.marks[0]}))
''')


def wfops_inside(root: Path, tmp: Path) -> float:
    """CPU seconds of a 600-step run, engine + store only, first to last commit, fresh process."""
    db = tmp / f"inside-{time.monotonic_ns()}.db"
    done = subprocess.run([sys.executable, "-c", WFOPS_INSIDE, str(root), str(db)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"wfops inside failed:\n{done.stderr}")
    return json.loads(done.stdout)["cpu"]


def langgraph_run(tmp: Path, steps: int, *, grow: bool = False) -> tuple[float, float, Path]:
    db = tmp / f"lg-{steps}-{grow}-{time.monotonic_ns()}.db"
    started = child_cpu()
    done = subprocess.run([sys.executable, "-c", LANGGRAPH, str(steps), str(db), "grow" if grow else "echo"],
                          capture_output=True, text=True)
    wall = child_cpu() - started
    if done.returncode != 0:
        raise SystemExit(f"langgraph failed:\n{done.stderr}")
    result = json.loads(done.stdout)
    if steps == LONG and not grow:
        LG_CPU.append(result["cpu"])
    return wall, result["inside"], db


def db_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "proj"
        make_project(root)
        wfops_run(root, "chain100.local")  # warm the OS caches and the store
        rows: dict[str, list[float]] = {k: [] for k in ("w600", "w100", "wf_in", "l600", "l100", "lg_in",
                                                        "wf_cpu")}
        for _ in range(args.repeat):
            w600, in600, steps600 = wfops_run(root, "chain600.local")
            w100, _in100, _ = wfops_run(root, "chain100.local")
            rows["w600"].append(w600)
            rows["w100"].append(w100)
            rows["wf_in"].append(in600 / steps600)
            l600, lin600, _ = langgraph_run(tmp, LONG)
            l100, _lin100, _ = langgraph_run(tmp, SHORT)
            rows["l600"].append(l600)
            rows["l100"].append(l100)
            rows["lg_in"].append(lin600 / LONG)
            rows["wf_cpu"].append(wfops_inside(root, tmp) / LONG)
        rows["lg_cpu"] = [c / LONG for c in LG_CPU]
        med = {k: statistics.median(v) * 1e6 for k, v in rows.items()}
        # Differences of medians: start-up CPU varies by tens of ms from one process to the next.
        med["wf_marg"] = (med["w600"] - med["w100"]) / (LONG - SHORT)
        med["lg_marg"] = (med["l600"] - med["l100"]) / (LONG - SHORT)

        # Bytes per step with a growing state: a fresh store holding only that run,
        # minus the size of an empty store.
        from wfops.store import open_store

        empty, grow = tmp / "empty.db", tmp / "grow.db"
        open_store(empty).close()
        wfops(root, "run", "grow600.local", "--json", "--db", str(grow))
        wf_bytes = (db_bytes(grow) - db_bytes(empty)) / LONG
        _w, _i, lg_db = langgraph_run(tmp, LONG, grow=True)
        lg_bytes = db_bytes(lg_db) / LONG

    print(f"{'per step (us, median of ' + str(args.repeat) + ')':<44}{'wfops':>10}{'LangGraph':>12}{'ratio':>8}")
    print(f"{'whole process CPU, (t600 - t100) / 500':<44}{med['wf_marg']:>10.0f}{med['lg_marg']:>12.0f}"
          f"{med['wf_marg'] / med['lg_marg']:>8.3f}")
    print(f"{'inside the run, wall (execution + commits)':<44}{med['wf_in']:>10.0f}{med['lg_in']:>12.0f}"
          f"{med['wf_in'] / med['lg_in']:>8.3f}")
    print(f"{'inside the run, CPU (execution + commits)':<44}{med['wf_cpu']:>10.0f}{med['lg_cpu']:>12.0f}"
          f"{med['wf_cpu'] / med['lg_cpu']:>8.3f}")
    print(f"{'store bytes per step, growing state (600)':<44}{wf_bytes:>10.0f}{lg_bytes:>12.0f}"
          f"{wf_bytes / lg_bytes:>8.3f}")


if __name__ == "__main__":
    main()
