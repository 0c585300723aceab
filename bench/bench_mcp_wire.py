"""`wfops mcp` over raw stdio: how long a hostile or malformed request waits for its JSON-RPC error.

    python3 bench/bench_mcp_wire.py [--repeat 20] [--smoke]

(`--smoke`: one round.)

Starts one real `wfops mcp` server on a one-workflow project, initializes it, then sends
each hostile line (a 5,000-digit integer, a lone surrogate escape, 5,000-deep nesting, a
line that is not JSON, a 5,000-digit id) `--repeat` times and prints the median and worst
wall time until its error answer arrives, next to a plain `tools/list` round trip. The
wire guard promises an answer within a second; the tests check only that one comes.
"""

from __future__ import annotations

import argparse
import json
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_smoke

LINES = {
    "5,000-digit integer": '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_runs",'
                           '"arguments":{"limit":' + "9" * 5000 + "}}}",
    "lone surrogate": '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file",'
                      '"arguments":{"path":"\\ud800"}}}',
    "5,000-deep nesting": '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":' + "[" * 5000 + "]" * 5000 + "}",
    "not JSON": "not json at all",
    "5,000-digit id": '{"jsonrpc":"2.0","id":' + "1" * 5000 + ',"method":"tools/list"}',
    "tools/list (plain)": '{"jsonrpc":"2.0","id":9,"method":"tools/list"}',
}


def answer(proc: subprocess.Popen[bytes], guard: float = 60) -> dict[str, object]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], guard)
    if not ready:
        raise SystemExit("no answer: the server left a request unanswered")
    return json.loads(proc.stdout.readline())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    add_smoke(parser)
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "workflows").mkdir()
        (root / "sources.yaml").write_text("sources: {}\n")
        (root / "workflows" / "one.yaml").write_text(
            "name: one\nsteps:\n  - {id: a, uses: std.echo, with: {value: 1}, next: end}\n")
        proc = subprocess.Popen([sys.executable, "-m", "wfops", "mcp", "--project", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None
        try:
            def send(line: str) -> None:
                assert proc.stdin is not None
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()
            send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}))
            answer(proc)
            send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
            print("| request | median | worst |\n| --- | ---: | ---: |")
            worst_all = 0.0
            for name, line in LINES.items():
                times = []
                for _ in range(repeat):
                    started = time.perf_counter()
                    send(line)
                    answer(proc)
                    times.append(time.perf_counter() - started)
                worst_all = max(worst_all, max(times))
                print(f"| {name} | {statistics.median(times) * 1000:.1f} ms | {max(times) * 1000:.1f} ms |")
        finally:
            proc.kill()
            proc.wait()
    print(f"slowest answer: {worst_all * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
