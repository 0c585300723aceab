"""Run every `bench/bench_*.py --smoke`, one after another; exit 1 if any fails.

    python3 bench/run_smoke.py

CI runs this so that every figure in docs/benchmarks/ comes from a script that still
works on the current code. Smoke mode measures nothing worth quoting: it takes each
script's code paths at the smallest sizes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A hung script fails CI instead of holding it; a smoke run takes seconds.
TIMEOUT = 300


def run(script: Path) -> tuple[bool, float]:
    print(f"== {script.name} --smoke", flush=True)
    started = time.perf_counter()
    try:
        ok = subprocess.run([sys.executable, str(script), "--smoke"], cwd=HERE.parent, timeout=TIMEOUT).returncode == 0
    except subprocess.TimeoutExpired:
        print(f"error: {script.name} --smoke took more than {TIMEOUT} s", flush=True)
        ok = False
    return ok, time.perf_counter() - started


def main() -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    started = time.perf_counter()
    results = {script.name: run(script) for script in scripts}
    print("\n| script | result | wall |\n| --- | --- | ---: |")
    for name, (ok, seconds) in results.items():
        print(f"| {name} | {'ok' if ok else 'FAILED'} | {seconds:.1f} s |")
    failed = [name for name, (ok, _) in results.items() if not ok]
    print(f"duration: bench smoke {time.perf_counter() - started:.0f} s ({len(scripts)} scripts"
          + (f", failed: {', '.join(failed)})" if failed else ")"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
