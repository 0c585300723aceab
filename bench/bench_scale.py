"""Scale: peak memory of `validate` on large projects, and a 20,000-step workflow and a
1,000,000-item input through validate, compile and run.

    python3 bench/bench_scale.py [--repeat 3] [--smoke]

(`--smoke`: 30 files, 1,000 steps, 10,000 items, one repeat.)

Each command runs as a fresh process; its peak RSS is its own `ru_maxrss`
(`resource.getrusage(RUSAGE_SELF)`, read at exit by a wrapper that calls the `wfops` entry
point), its CPU `ru_utime + ru_stime`. Linux carries the peak RSS of the parent over fork
and exec, so this script keeps itself small (the large input is written by a child) and
prints its own peak: a figure at that floor is the floor, not the command. Cases:
- `validate` (cold: `.wfops/cache` removed) of N generated workflows (those of
  `bench_validate.py`: ~5.6 KB, 20 steps, a python source with pydantic models), beside
  `check-jsonschema` on the same files (its peak RSS the same way, when installed);
- `validate` of 5 workflows of 20,000 `std.echo` steps each (100,000 steps);
- one workflow of 20,000 steps: `validate`, `compile`, the first `run` after compile, a
  second `run`;
- a run whose `--input-file` holds 1,000,000 items (JSON, 16 MB).
Medians and ranges of the repeats.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_validate import generate, schema_file
from common import add_smoke

# The wrapper: run a console entry point in this process, then report its own peak RSS and CPU.
MEASURED = """
import json, resource, runpy, sys
kind, rest = sys.argv[1], sys.argv[2:]
try:
    if kind == "wfops":
        from wfops.cli.main import main
        main(rest)
    else:
        sys.argv = [kind, *rest]
        runpy.run_module("check_jsonschema", run_name="__main__")
    code = 0
except SystemExit as exc:
    code = exc.code or 0
usage = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write("MEASURED " + json.dumps({"code": code, "rss_mb": usage.ru_maxrss / 1024,
                                           "cpu": usage.ru_utime + usage.ru_stime}) + "\\n")
"""


def measured(kind: str, args: list[str], cwd: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", MEASURED, kind, *args], cwd=cwd, capture_output=True, text=True)
    line = next((x for x in done.stderr.splitlines() if x.startswith("MEASURED ")), None)
    if line is None:
        raise SystemExit(f"{kind} {' '.join(args)} crashed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(line[len("MEASURED "):])
    if result["code"] != 0:
        raise SystemExit(f"{kind} {' '.join(args)} exited {result['code']}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return result


def chain(name: str, steps: int) -> str:
    lines = [f"name: {name}", "input: {type: object, properties: {value: {type: integer}}}",
             "state: {value: {type: integer}}", "output: {value: $state.value}", "steps:"]
    for i in range(1, steps + 1):
        after = f"s{i + 1}" if i < steps else "end"
        lines.append(f"  - {{id: s{i}, uses: std.echo, with: {{value: $input.value}}, save: {{value: state.value}}, "
                     f"next: {after}}}")
    return "\n".join(lines) + "\n"


MANY = """name: many
input: {type: object, required: [items], properties: {items: {type: array, items: {type: object}}}}
state: {first: {type: object}}
output: {first: $state.first}
steps:
  - {id: first, uses: std.echo, with: {value: $input.items.0}, save: {value: state.first}, next: end}
"""


def project(root: Path, workflows: dict[str, str], deployments: dict[str, str]) -> Path:
    (root / "workflows").mkdir(parents=True)
    (root / "deployments").mkdir()
    (root / "sources.yaml").write_text("sources: {}\n")
    for name, text in workflows.items():
        (root / "workflows" / f"{name}.yaml").write_text(text)
    for name, workflow in deployments.items():
        (root / "deployments" / f"{name}.yaml").write_text(f"name: {name}\nworkflow: {workflow}\ninput: {{value: 1}}\n"
                                                          if workflow != "many" else f"name: {name}\nworkflow: many\n")
    return root


def cold(root: Path) -> Path:
    shutil.rmtree(root / ".wfops", ignore_errors=True)
    return root


def spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    shown = [v * scale for v in values]
    return f"{statistics.median(shown):.0f} {unit} ({min(shown):.0f}-{max(shown):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    add_smoke(parser)
    args = parser.parse_args()
    files, steps, items, repeat = (30, 1000, 10_000, 1) if args.smoke else (3000, 20_000, 1_000_000, args.repeat)
    has_cj = shutil.which("check-jsonschema") is not None
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        many_files = tmp / "files"
        generated = generate(many_files, files)
        schema = schema_file(tmp)
        big = project(tmp / "steps", {f"big{i}": chain(f"big{i}", steps) for i in range(5)}, {})
        one = project(tmp / "one", {"big": chain("big", steps)}, {"big.local": "big"})
        wide = project(tmp / "wide", {"many": MANY}, {"many.local": "many"})
        # Written by a child: Linux carries a process's peak RSS over fork and exec, so this
        # process stays small for the children's ru_maxrss to be their own.
        subprocess.run([sys.executable, "-c", "import json, sys; json.dump({'items': [{'id': i} for i in "
                        "range(int(sys.argv[2]))]}, open(sys.argv[1], 'w'))", str(wide / "in.json"), str(items)],
                       check=True)
        measured("wfops", ["compile"], wide)
        cases: dict[str, list[dict[str, float]]] = {}

        def add(name: str, result: dict[str, float]) -> None:
            cases.setdefault(name, []).append(result)

        for _ in range(repeat):
            add(f"validate, {files:,} files (cold)", measured("wfops", ["validate"], cold(many_files)))
            if has_cj:
                add(f"check-jsonschema, the same {files:,} files", measured(
                    "check-jsonschema", ["--schemafile", str(schema), *map(str, generated)], many_files))
            add(f"validate, 5 x {steps:,} steps (cold)", measured("wfops", ["validate"], cold(big)))
            add(f"validate, one {steps:,}-step workflow (cold)", measured("wfops", ["validate"], cold(one)))
            add(f"compile, one {steps:,}-step workflow", measured("wfops", ["compile"], cold(one)))
            add(f"first run after compile, {steps:,} steps", measured("wfops", ["run", "big.local", "--json"], one))
            add(f"second run, {steps:,} steps", measured("wfops", ["run", "big.local", "--json"], one))
            add(f"run with a {items:,}-item --input-file", measured(
                "wfops", ["run", "many.local", "--input-file", "in.json", "--json"], wide))
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"whole processes, median (min-max) of {repeat}; peak RSS from getrusage(RUSAGE_SELF).ru_maxrss "
          f"(this script's own peak, the floor of every figure: {floor:.0f} MB)\n")
    print("| case | peak RSS | CPU |")
    print("| --- | ---: | ---: |")
    for name, results in cases.items():
        print(f"| {name} | {spread([r['rss_mb'] for r in results], 'MB')} "
              f"| {spread([r['cpu'] for r in results], 'ms', 1000)} |")


if __name__ == "__main__":
    main()
