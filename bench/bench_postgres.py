"""Durable step cost on PostgreSQL: wfops (engine + PostgreSQL store) vs LangGraph + PostgresSaver.

Both sides run the same linear chain of echo steps (bench_store.py's generated project
and graph), every step checkpointed before the next starts, on the SAME server in one
run of this script: a throw-away cluster (initdb in a temp dir, unix socket), or
`--url` for a server of your own (then the server-CPU row is not measured).
- wfops: `wfops run <deployment> --json --db postgresql://...`;
- LangGraph: `StateGraph` of N nodes, `PostgresSaver` (psycopg 3, autocommit),
  `durability="sync"`.

Figures per step (medians of --repeat runs), all marginal, so start-up cancels out:
- client CPU: (CPU of the process at N=600 minus at N=100) / 500;
- server CPU: (CPU the PostgreSQL processes spent during the N=600 run minus during the
  N=100 run) / 500 (postmaster's children, live and reaped; throw-away cluster only);
- inside, CPU: process CPU of the execution only (wfops: a real `wfops run`, from its
  first to its last commit, / 599, as in bench_store.py; LangGraph: the `invoke` call / 600);
- inside, wall: wfops from the run's first to last commit (the store's stamps of a real
  `wfops run`); LangGraph the `invoke` call; / 600.

Needs the `bench` extra (langgraph, langgraph-checkpoint-postgres) and the `postgres` one.
Run: python bench/bench_postgres.py [--repeat 3] [--url postgresql://...] [--smoke]
(`--smoke`: chains of 10 and 20 steps, one repeat, LangGraph skipped if not installed.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from bench_store import SMOKE, Chains, make_project, wfops_marked
from common import add_smoke, child_cpu, peer_available

REPO = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], *, cwd: Path | None = None) -> tuple[float, float, str]:
    """(client CPU seconds, wall seconds, stdout) of one child process."""
    cpu, wall = child_cpu(), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    wall, cpu = time.perf_counter() - wall, child_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({done.returncode}):\n{done.stderr}")
    return cpu, wall, done.stdout


def _ticks(pid: int, *, children: bool) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # after the command name: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
    return int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)


def server_cpu_probe(data_dir: Path) -> Callable[[], float]:
    """CPU seconds the cluster has used so far: the postmaster, its live children (WAL
    writer, checkpointer, backends) and the children it has already reaped."""
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    hz = os.sysconf("SC_CLK_TCK")

    def total() -> float:
        ticks = _ticks(postmaster, children=True)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                    ticks += _ticks(int(entry.name), children=False)
            except (OSError, ValueError, IndexError):
                continue  # it exited meanwhile: the postmaster's reaped total has it
        return ticks / hz

    return total


LANGGRAPH = textwrap.dedent('''
    import json, sys, time
    from typing import TypedDict
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import END, START, StateGraph

    n, url, thread = int(sys.argv[1]), sys.argv[2], sys.argv[3]

    class S(TypedDict):
        value: int

    g = StateGraph(S)
    for i in range(1, n + 1):
        g.add_node(f"s{i}", lambda s: {"value": s["value"]})
    g.add_edge(START, "s1")
    for i in range(1, n):
        g.add_edge(f"s{i}", f"s{i + 1}")
    g.add_edge(f"s{n}", END)
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        app = g.compile(checkpointer=saver)
        started, cpu = time.perf_counter(), time.process_time()
        app.invoke({"value": 1}, {"configurable": {"thread_id": thread}, "recursion_limit": n + 10},
                   durability="sync")
        inside, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({"inside": inside, "cpu": cpu}))
''')


def run_wall(url: str, run_id: str) -> float:
    """Seconds from a run's first to its last commit, from the store's own stamps."""
    from datetime import datetime

    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT created_at, updated_at FROM runs WHERE id = %s", (run_id,)).fetchone()
    assert row is not None
    first, last = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in row)
    return (last - first).total_seconds()


def wait_idle(url: str) -> None:
    """Until no other session is connected: a finished client's backend has exited (and its
    CPU is in the postmaster's reaped total)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(500):
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                               "AND pid <> pg_backend_pid()").fetchone()
            if row and row[0] == 0:
                return
            time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--url", help="an existing PostgreSQL database (default: a throw-away cluster)")
    add_smoke(parser)
    args = parser.parse_args()
    chains, repeat = (SMOKE, 1) if args.smoke else (Chains(), args.repeat)
    long, short = chains.long, chains.short
    peer = peer_available("LangGraph + PostgresSaver", ("langgraph", "langgraph.checkpoint.postgres"),
                          smoke=args.smoke)
    with ExitStack() as stack:
        server: Callable[[], float] | None = None
        if args.url:
            url = args.url
        else:
            sys.path.insert(0, str(REPO))
            from tests.pgserver import NoServer, fresh_database, throwaway_cluster

            try:
                cluster = stack.enter_context(throwaway_cluster())
            except NoServer as exc:
                raise SystemExit(f"error: no throw-away PostgreSQL cluster: {exc} (or pass --url)") from None
            url = cluster.url(fresh_database(cluster))
            server = server_cpu_probe(cluster.data)
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        roots = {n: tmp / f"chain{n}" for n in (short, long)}
        for n, root in roots.items():
            make_project(root, f"chain{n}", n)

        def wfops(steps: int) -> tuple[float, float, float, float]:
            wait_idle(url)
            before = server() if server else 0.0
            cpu, wall, out = timed([sys.executable, "-m", "wfops", "run", f"chain{steps}.local", "--json",
                                    "--db", url, "--project", str(roots[steps])], cwd=roots[steps])
            wait_idle(url)
            return cpu, wall, (server() - before) if server else 0.0, run_wall(url, json.loads(out)["run_id"])

        def langgraph(steps: int, n: int) -> tuple[float, float, float, float, float]:
            wait_idle(url)
            before = server() if server else 0.0
            cpu, wall, out = timed([sys.executable, "-c", LANGGRAPH, str(steps), url, f"t{steps}-{n}"])
            wait_idle(url)
            result = json.loads(out)
            return cpu, wall, (server() - before) if server else 0.0, result["cpu"], result["inside"]

        wfops(short)  # warm: the schema, the OS caches; writes the gate record
        wfops(long)
        if peer:
            langgraph(short, -1)
        # No whole-process wall row: on a shared machine start-up varies by +-0.3 s, more
        # than 500 steps cost; the run's own first-to-last-commit time is the wall figure.
        keys = ("cpu", "server", "inside", "inside_wall")
        rows: dict[str, dict[str, list[float]]] = {side: {k: [] for k in keys} for side in ("wf", "lg")}
        for n in range(repeat):
            wf_long, wf_short = wfops(long), wfops(short)
            for i, key in ((0, "cpu"), (2, "server")):
                rows["wf"][key].append((wf_long[i] - wf_short[i]) / (long - short))
            wait_idle(url)
            rows["wf"]["inside"].append(wfops_marked(roots[long], f"chain{long}.local", db=url)[1] / (long - 1))
            rows["wf"]["inside_wall"].append(wf_long[3] / long)
            if peer:
                lg_long, lg_short = langgraph(long, n), langgraph(short, n)
                for i, key in ((0, "cpu"), (2, "server")):
                    rows["lg"][key].append((lg_long[i] - lg_short[i]) / (long - short))
                rows["lg"]["inside"].append(lg_long[3] / long)
                rows["lg"]["inside_wall"].append(lg_long[4] / long)

    med = {side: {k: statistics.median(v) * 1e6 for k, v in table.items() if v} for side, table in rows.items()}
    span = f"(t{long} - t{short}) / {long - short}"
    labels = {"cpu": f"client CPU, {span}", "server": f"server CPU, {span}",
              "inside": "inside the run, client CPU per step", "inside_wall": "inside the run, wall per step"}
    print(f"{'per step (us, median of ' + str(repeat) + ')':<40}{'wfops':>10}{'LangGraph':>12}{'ratio':>8}")
    for key in keys:
        if key == "server" and server is None:
            continue
        wf = med["wf"][key]
        if not peer:
            print(f"{labels[key]:<40}{wf:>10.0f}{'-':>12}{'-':>8}")
            continue
        lg = med["lg"][key]
        print(f"{labels[key]:<40}{wf:>10.0f}{lg:>12.0f}{(wf / lg if lg else float('nan')):>8.3f}")


if __name__ == "__main__":
    main()
