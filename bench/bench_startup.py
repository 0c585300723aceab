"""Start-up: CPU time of short wfops commands as whole processes, `python -c pass` the floor.

    python3 bench/bench_startup.py [--repeat 7] [--smoke]

(`--smoke`: 2 runs in the store instead of 20, one repeat.)

In a generated project with a one-step `std.echo` workflow (compiled, run once so the
run gate's record and the validate cache exist, as a user's project has them), times,
as separate processes, interleaved so a load spike hits all alike:
- `python -c pass` (the floor: the interpreter and site-packages' start-up),
- `python -c "import sqlite3; <the runs list query>"` (the same query from bare Python),
- `wfops run one.local --json` (one-step workflow, unchanged project),
- `wfops runs list --limit 20` (20 runs in the store),
- `wfops validate` (cache hit),
- `wfops --version` (answered by the entry point),
- in a second project made by `wfops init` (a python source with pydantic models; compiled,
  validated and checked once), `wfops check` and `wfops caps list`,
- `wfops --help` (typer builds its parser: what every command paid before the table).
Prints the median CPU time (user + system) of each, and each minus the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import add_smoke, child_cpu

# A user's installed wfops has its bytecode cached; a developer shell may turn that off.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

ONE = """name: one
input: {type: object, properties: {value: {type: integer}}}
state: {value: {type: integer}}
output: {value: $state.value}
steps:
  - {id: s1, uses: std.echo, with: {value: $input.value}, save: {value: state.value}, next: end}
"""

QUERY = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
         "c.execute('SELECT id, deployment, workflow, status, outcome, created_at FROM runs "
         "ORDER BY created_at DESC LIMIT 20').fetchall()")


def timed(argv: list[str], cwd: Path) -> float:
    started = child_cpu()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return child_cpu() - started


def make_project(root: Path, runs: int) -> None:
    (root / "workflows").mkdir(parents=True)
    (root / "deployments").mkdir()
    (root / "sources.yaml").write_text("sources: {}\n")
    (root / "workflows" / "one.yaml").write_text(ONE)
    (root / "deployments" / "one.yaml").write_text("name: one.local\nworkflow: one\ninput: {value: 1}\n")
    wfops = [sys.executable, "-m", "wfops"]
    timed([*wfops, "compile"], root)
    for _ in range(runs):
        timed([*wfops, "run", "one.local", "--json"], root)
    timed([*wfops, "validate"], root)


def make_python_project(root: Path) -> None:
    """`wfops init`'s project (a python source with pydantic models), as a user keeps it."""
    wfops = [sys.executable, "-m", "wfops"]
    timed([*wfops, "init", str(root)], root.parent)
    for command in ("compile", "validate", "check"):
        timed([*wfops, command], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    add_smoke(parser)
    args = parser.parse_args()
    repeat, runs = (1, 2) if args.smoke else (args.repeat, 20)
    wfops = [sys.executable, "-m", "wfops"]
    with tempfile.TemporaryDirectory() as tmp_name:
        root = Path(tmp_name) / "proj"
        make_project(root, runs)
        python_root = Path(tmp_name) / "pyproj"
        make_python_project(python_root)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python + sqlite3, the runs list query": [sys.executable, "-c", QUERY, str(root / ".wfops" / "wfops.db")],
            "wfops run (1 step, unchanged project)": [*wfops, "run", "one.local", "--json"],
            f"wfops runs list --limit 20 ({runs} runs)": [*wfops, "runs", "list", "--limit", "20"],
            "wfops validate (cache hit)": [*wfops, "validate"],
            "wfops --version": [*wfops, "--version"],
            "wfops --help (typer parser)": [*wfops, "--help"],
            "wfops check (pydantic source)": [*wfops, "check"],
            "wfops caps list (pydantic source)": [*wfops, "caps", "list"],
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeat):
            for name, argv in cases.items():
                # `python -m` puts the working directory on sys.path, which the records' key
                # covers: each project's commands run from its own root, as a user runs them.
                times[name].append(timed(argv, python_root if "pydantic" in name else root))
    med = {name: statistics.median(values) * 1000 for name, values in times.items()}
    floor = med["python -c pass"]
    print(f"median CPU of {repeat} whole processes, ms (user + system)\n")
    print("| command | CPU | minus `python -c pass` | / `python -c pass` |")
    print("| --- | ---: | ---: | ---: |")
    for name, value in med.items():
        print(f"| {name} | {value:.0f} ({min(times[name]) * 1000:.0f}-{max(times[name]) * 1000:.0f}) "
              f"| {value - floor:.0f} | {value / floor:.2f}x |")


if __name__ == "__main__":
    main()
