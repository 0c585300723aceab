"""Durable step cost: wfops (engine + SQLite store, one commit per step) vs LangGraph + SqliteSaver.

Both sides run a linear chain of echo steps in their own fresh process, every step
checkpointed before the next starts:
- wfops: `wfops run <deployment> --json` on a generated project, one project per chain
  length (50, 100, 600, 2,000 `std.echo` steps), as a user has it: a project whose
  only workflow is that chain, compiled, run once before timing (so the run gate's
  record exists: an unchanged project);
- LangGraph: `StateGraph` of N nodes, `SqliteSaver` on a WAL + synchronous=NORMAL file,
  `durability="sync"`.

Figures per step (CPU time, user + system: this 2-core machine is shared, and CPU
time is what a step costs whatever else runs):
- whole process: (median CPU of the process at N=600 minus that at N=100) / 500, so
  start-up cancels out but everything that grows with the workflow is included
  (wfops: hashing the files, loading the recorded artifact, building the plan;
  LangGraph: building the graph). Also the same with the full checks (the gate record
  deleted before each run: what the first run after an edit costs);
- inside the run: CPU of the execution only (wfops: a real `wfops run`, from its first
  to its last commit; LangGraph: the `invoke` call), divided by N; and the wall time of
  the same span (wfops: the store's created_at / updated_at);
- pre-step work: CPU of a `wfops run` process up to its first commit, N=50 vs N=2,000, on
  an already-run project and right after `wfops compile` (the gate record removed first, so
  only what compile leaves is there: the first run after a change).
Also the store bytes per step of a 600-step run whose state grows (an append reducer).

Run: python bench/bench_store.py [--repeat 5] [--smoke]
(`--smoke`: chains of 5, 10, 20, 40 steps, one repeat, LangGraph skipped if not installed.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from common import add_smoke, child_cpu, peer_available

# A user's installed wfops has its bytecode cached; a developer shell may turn that off.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

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


@dataclass(frozen=True)
class Chains:
    """The chain lengths: per-step figures are (t(long) - t(short)) / (long - short); the
    pre-step work is compared between small and big."""

    small: int = 50
    short: int = 100
    long: int = 600
    big: int = 2000

    def all(self) -> tuple[int, ...]:
        return (self.small, self.short, self.long, self.big)


SMOKE = Chains(5, 10, 20, 40)


def make_project(root: Path, name: str, steps: int, *, grow: bool = False) -> None:
    """A project whose only workflow is one chain, compiled, as a user has it."""
    (root / "workflows").mkdir(parents=True)
    (root / "deployments").mkdir()
    (root / "sources.yaml").write_text("sources: {}\n")
    (root / "workflows" / f"{name}.yaml").write_text(echo_chain(name, steps, grow=grow))
    (root / "deployments" / f"{name}.yaml").write_text(
        f"name: {name}.local\nworkflow: {name}\ninput: {{value: 1}}\n" if not grow
        else f"name: {name}.local\nworkflow: {name}\n")
    wfops(root, "compile")


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


def wfops_run(root: Path, deployment: str, *, full: bool = False) -> tuple[float, float, int]:
    """(whole-process CPU seconds, inside wall seconds, steps) of one run; `full`: without
    the gate record (the full checks run, as after an edit)."""
    if full:
        shutil.rmtree(root / ".wfops" / "cache" / "runs", ignore_errors=True)
    cpu, out = wfops(root, "run", deployment, "--json")
    run_id = json.loads(out)["run_id"]
    conn = sqlite3.connect(root / ".wfops" / "wfops.db")
    created, updated, steps = conn.execute(
        "SELECT created_at, updated_at, steps FROM runs WHERE id=?", (run_id,)).fetchone()
    conn.close()
    return cpu, (_stamp(updated) - _stamp(created)).total_seconds(), steps


# A real `wfops run` whose store (argv[1]: sqlite or postgres) notes the process CPU time at
# every commit: the first mark is the work before the first step, first to last is the execution.
WFOPS_MARKED = textwrap.dedent('''
    import atexit, importlib, json, sys, time

    module = importlib.import_module("wfops.store." + sys.argv[1])
    store = module.SqliteStore if sys.argv[1] == "sqlite" else module.PostgresStore
    marks = []
    commit = store.commit

    def marked(self, run, entries):
        commit(self, run, entries)
        marks.append(time.process_time())

    store.commit = marked
    atexit.register(lambda: sys.stderr.write("MARKS " + json.dumps([marks[0], marks[-1], len(marks)]) + "\\n"))
    from wfops.cli.main import main

    main(sys.argv[2:])
''')


def wfops_marked(root: Path, deployment: str, *, db: str | None = None) -> tuple[float, float]:
    """(CPU seconds before the first commit, CPU seconds from the first to the last commit);
    `db`: a postgresql:// URL (default: the project's SQLite store)."""
    store, where = ("postgres", ["--db", db]) if db else ("sqlite", [])
    done = subprocess.run([sys.executable, "-c", WFOPS_MARKED, store, "run", deployment, "--json", *where,
                           "--project", str(root)], capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"wfops run {deployment} failed ({done.returncode}):\n{done.stderr}")
    line = next(x for x in done.stderr.splitlines() if x.startswith("MARKS "))
    first, last, _count = json.loads(line[len("MARKS "):])
    return first, last - first


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


def langgraph_run(tmp: Path, steps: int, *, grow: bool = False) -> tuple[float, float, float, Path]:
    """(whole-process CPU seconds, inside wall seconds, inside CPU seconds, the database)."""
    db = tmp / f"lg-{steps}-{grow}-{time.monotonic_ns()}.db"
    started = child_cpu()
    done = subprocess.run([sys.executable, "-c", LANGGRAPH, str(steps), str(db), "grow" if grow else "echo"],
                          capture_output=True, text=True)
    cpu = child_cpu() - started
    if done.returncode != 0:
        raise SystemExit(f"langgraph failed:\n{done.stderr}")
    result = json.loads(done.stdout)
    return cpu, result["inside"], result["cpu"], db


def commit_floor(tmp: Path, commits: int) -> dict[str, float]:
    """CPU seconds per commit, in this process, of the store's own commit of a plain step (the
    chain's entry: one trace row carrying the cursor) against a bare write of the same row with
    the same connection settings: one autocommitted INSERT (what the store sends) and BEGIN
    IMMEDIATE / INSERT / COMMIT. Each on a fresh store, after as many commits to warm it."""
    return {way: _commit_cpu(tmp, way, commits) for way in ("store", "insert", "begin")}


def _commit_cpu(tmp: Path, way: str, commits: int) -> float:
    from wfops.engine.types import RunSnapshot, TraceEntry
    from wfops.store.base import _cursor_text, _trace_rows
    from wfops.store.sqlite import SqliteStore

    store = SqliteStore(tmp / f"floor-{way}-{time.monotonic_ns()}" / "wfops.db")
    store.begin_run("r", artifacts={}, normalized={}, meta={})
    store.commit(RunSnapshot("r", "chain", "h", "chain.local", "running", {"value": 1}), [])
    made = [(RunSnapshot("r", "chain", "h", "chain.local", "running", {"value": 1},
                         cursor={"seq": seq, "step": f"s{seq}"}),
             TraceEntry(seq, f"s{seq}", "call", 1, {"value": 1}, "ok", {"value": 1},
                        [{"path": "state.value", "value": 1}], f"s{seq + 1}", None,
                        "2026-12-02T00:00:00.000000Z", "2026-12-02T00:00:00.000100Z"))
            for seq in range(1, 2 * commits + 1)]
    rows = [_trace_rows("r", [e], e.seq, _cursor_text(run.cursor))[0] for run, e in made]
    plain, full, cur = store._q.insert_plain_trace, store._q.insert_trace, store.conn.cursor()

    def write(i: int) -> None:
        if way == "store":
            run, entry = made[i]
            store.commit(run, [entry])
        elif way == "insert":
            cur.execute(plain, rows[i][:10] + rows[i][11:14])  # without the NULL error and extra
        else:
            cur.execute("BEGIN IMMEDIATE")
            cur.execute(full, rows[i])
            cur.execute("COMMIT")

    for i in range(commits):
        write(i)
    started = time.process_time()
    for i in range(commits, 2 * commits):
        write(i)
    cpu = (time.process_time() - started) / commits
    store.close()
    return cpu


def db_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    add_smoke(parser)
    args = parser.parse_args()
    chains, repeat = (SMOKE, 1) if args.smoke else (Chains(), args.repeat)
    long, short, small, big = chains.long, chains.short, chains.small, chains.big
    peer = peer_available("LangGraph + SqliteSaver", ("langgraph", "langgraph.checkpoint.sqlite"),
                          smoke=args.smoke)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        roots = {n: tmp / f"chain{n}" for n in chains.all()}
        for n, root in roots.items():
            make_project(root, f"chain{n}", n)
            wfops_run(root, f"chain{n}.local")  # warm the OS caches and the store; writes the gate record
        rows: dict[str, list[float]] = {k: [] for k in (
            "wlong", "wshort", "flong", "fshort", "wf_in", "wf_cpu", "pre_small", "pre_big", "cpre_small", "cpre_big",
            "llong", "lshort", "lg_in", "lg_cpu", "c_store", "c_insert", "c_begin")}
        loads: list[float] = []
        for _ in range(repeat):
            loads.append(os.getloadavg()[0])
            floor = commit_floor(tmp, 50 if args.smoke else 2000)
            for way in ("store", "insert", "begin"):
                rows["c_" + way].append(floor[way])
            # Interleaved, so a load spike hits every side alike.
            wlong, in_long, steps_long = wfops_run(roots[long], f"chain{long}.local")
            rows["wlong"].append(wlong)
            rows["wshort"].append(wfops_run(roots[short], f"chain{short}.local")[0])
            rows["wf_in"].append(in_long / steps_long)
            rows["flong"].append(wfops_run(roots[long], f"chain{long}.local", full=True)[0])
            rows["fshort"].append(wfops_run(roots[short], f"chain{short}.local", full=True)[0])
            _pre, inside = wfops_marked(roots[long], f"chain{long}.local")
            rows["wf_cpu"].append(inside / long)  # the first mark is the run's creation, then one per step
            rows["pre_small"].append(wfops_marked(roots[small], f"chain{small}.local")[0])
            rows["pre_big"].append(wfops_marked(roots[big], f"chain{big}.local")[0])
            for n, key in ((small, "cpre_small"), (big, "cpre_big")):
                shutil.rmtree(roots[n] / ".wfops" / "cache" / "runs", ignore_errors=True)
                wfops(roots[n], "compile")
                rows[key].append(wfops_marked(roots[n], f"chain{n}.local")[0])
            if peer:
                llong, lin_long, lcpu_long, _ = langgraph_run(tmp, long)
                rows["llong"].append(llong)
                rows["lshort"].append(langgraph_run(tmp, short)[0])
                rows["lg_in"].append(lin_long / long)
                rows["lg_cpu"].append(lcpu_long / long)
        med = {k: statistics.median(v) * 1e6 for k, v in rows.items() if v}
        # Differences of medians: start-up CPU varies by tens of ms from one process to the next.
        med["wf_marg"] = (med["wlong"] - med["wshort"]) / (long - short)
        med["wf_full"] = (med["flong"] - med["fshort"]) / (long - short)
        if peer:
            med["lg_marg"] = (med["llong"] - med["lshort"]) / (long - short)

        # Bytes per step with a growing state: a fresh store holding only that run,
        # minus the size of an empty store.
        from wfops.store import open_store

        grow_root = tmp / f"grow{long}"
        make_project(grow_root, f"grow{long}", long, grow=True)
        empty, grow = tmp / "empty.db", tmp / "grow.db"
        open_store(empty).close()
        wfops(grow_root, "run", f"grow{long}.local", "--json", "--db", str(grow))
        med["wf_bytes"] = (db_bytes(grow) - db_bytes(empty)) / long
        if peer:
            med["lg_bytes"] = db_bytes(langgraph_run(tmp, long, grow=True)[3]) / long

    span = f"(t{long} - t{short}) / {long - short}"
    print(f"{'per step (us, median of ' + str(repeat) + ')':<52}{'wfops':>10}{'LangGraph':>12}{'ratio':>8}")
    for label, ours, theirs in (
            (f"whole process CPU, {span}", "wf_marg", "lg_marg"),
            ("  same, full checks (no gate record)", "wf_full", "lg_marg"),
            ("inside the run, CPU (execution + commits)", "wf_cpu", "lg_cpu"),
            ("inside the run, wall (execution + commits)", "wf_in", "lg_in"),
            (f"store bytes per step, growing state ({long})", "wf_bytes", "lg_bytes")):
        if peer:
            print(f"{label:<52}{med[ours]:>10.0f}{med[theirs]:>12.0f}{med[ours] / med[theirs]:>8.3f}")
        else:
            print(f"{label:<52}{med[ours]:>10.0f}{'-':>12}{'-':>8}")
    print(f"\ninside the run, CPU per step, each of {repeat} (us): "
          + ", ".join(f"{v * 1e6:.1f}" for v in rows["wf_cpu"])
          + f"; load average {min(loads):.2f}-{max(loads):.2f}")
    print(f"one commit, CPU (us, median of {repeat}): the store's, plain step {med['c_store']:.1f}; bare "
          f"autocommitted INSERT of the same row {med['c_insert']:.1f}; bare BEGIN IMMEDIATE / INSERT / COMMIT "
          f"{med['c_begin']:.1f}")
    print(f"\npre-step CPU of `wfops run` (ms): {small} steps {med['pre_small'] / 1000:.0f}, {big:,} steps "
          f"{med['pre_big'] / 1000:.0f} (ratio {med['pre_big'] / med['pre_small']:.2f})")
    print(f"the same right after `wfops compile` (ms): {small} steps {med['cpre_small'] / 1000:.0f}, {big:,} steps "
          f"{med['cpre_big'] / 1000:.0f} (ratio {med['cpre_big'] / med['cpre_small']:.2f})")


if __name__ == "__main__":
    main()
