"""How long `wfops test` takes for 200 cases of a 20-step workflow.

    python3 bench/bench_test.py [CASES=200] [REPEATS=5] [--smoke]

(`--smoke`: 4 cases, one repeat.)

A temporary project: one python source (two nodes), one workflow of 20 steps (18
calls of python nodes, one condition, one end; one call has two outcomes), compiled
to wfops.lock, and one test file with CASES cases that mock every python call (by
ref and by step id, the outcome varying by case) and check status, outcome, path and
state. Timed: `wfops test` as a subprocess, end to end (interpreter start, imports,
validation, every case), and `Project.test()` in-process (validation + cases) with
the cases' own time summed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_smoke

import wfops

NODES = '''
from pydantic import BaseModel

import wfops


class N(BaseModel):
    n: int


@wfops.node
def inc(payload: N) -> N:
    """Add one."""
    return N(n=payload.n + 1)


@wfops.node(outcomes=["ok", "odd"])
def parity(payload: N) -> wfops.Result[N]:
    """Sort by parity."""
    return wfops.Result(outcome="odd" if payload.n % 2 else "ok", output=payload)
'''


def workflow() -> str:
    steps = []
    for i in range(17):
        steps.append(f"  - id: s{i}\n    uses: nodes.inc\n    with: {{n: $state.n}}\n"
                     f"    save: {{n: state.n}}\n    next: {'s' + str(i + 1) if i < 16 else 'check'}\n")
    steps.append("  - id: check\n    uses: nodes.parity\n    with: {n: $state.n}\n    save: {n: state.n}\n"
                 "    on: {ok: even, odd: done}\n")
    steps.append("  - id: even\n    if: {gt: [$state.n, 0]}\n    then: done\n    else: done\n")
    steps.append("  - id: done\n    end: finished\n")
    return ("name: chain\ninput: {type: object, properties: {n: {type: integer}}}\n"
            "state: {n: {type: integer}}\noutput: {n: $state.n}\nsteps:\n" + "".join(steps))


def tests(cases: int) -> str:
    out = ["workflow: chain\ncases:\n"]
    for c in range(cases):
        odd = c % 2 == 1
        path = [f"s{i}" for i in range(17)] + ["check"] + ([] if odd else ["even"]) + ["done"]
        out.append(
            f"  - name: case {c}\n    input: {{n: {c}}}\n    mocks:\n"
            f"      nodes.inc: {{output: {{n: {c}}}}}\n"
            f"      s3: [{{output: {{n: {c + 3}}}}}]\n"
            f"      check: {{outcome: {'odd' if odd else 'ok'}, output: {{n: {c}}}}}\n"
            f"    expect:\n      status: completed\n      outcome: finished\n"
            f"      path: [{', '.join(path)}]\n      state: {{n: {c}}}\n")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1].strip())
    parser.add_argument("cases", type=int, nargs="?", default=200)
    parser.add_argument("repeats", type=int, nargs="?", default=5)
    add_smoke(parser)
    args = parser.parse_args()
    cases, repeats = (4, 1) if args.smoke else (args.cases, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "sources.yaml").write_text("sources:\n  nodes: {kind: python, module: benchnodes}\n")
        (root / "benchnodes.py").write_text(NODES)
        (root / "workflows").mkdir()
        (root / "workflows" / "chain.yaml").write_text(workflow())
        (root / "tests").mkdir()
        (root / "tests" / "chain.wftest.yaml").write_text(tests(cases))
        assert wfops.Project(root).compile().written
        report = wfops.Project(root).test()
        assert report.ok and len(report.cases) == cases, report.to_dict()["diagnostics"] or report.cases[0]
        cli, inproc, case_sums = [], [], []
        for _ in range(repeats):
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "wfops", "test", "--project", str(root)],
                                  capture_output=True, text=True)
            cli.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            start = time.perf_counter()
            report = wfops.Project(root).test()
            inproc.append(time.perf_counter() - start)
            case_sums.append(sum(c.duration for c in report.cases))
    print(f"{cases} cases x 20 steps, {repeats} repeats (min / median, seconds)")
    print(f"wfops test (subprocess, end to end): {min(cli):.3f} / {statistics.median(cli):.3f}")
    print(f"Project.test() in-process:           {min(inproc):.3f} / {statistics.median(inproc):.3f}")
    print(f"cases only (sum of case durations):  {min(case_sums):.3f} / {statistics.median(case_sums):.3f}")
    print(f"per case: {min(case_sums) / cases * 1000:.2f} ms")


if __name__ == "__main__":
    main()
