"""Start-up stays lean: importing the CLI loads none of the heavy libraries.

Fresh interpreters (slow): the point is what a new process imports.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import REPO, WFOPS, process_env

pytestmark = pytest.mark.slow

HEAVY = ("pydantic", "pydantic_core", "ruamel", "jsonschema", "sqlite3", "_sqlite3", "mcp", "watchfiles",
         "rich", "psycopg")

PROBE = """
import json, sys
import wfops.cli.main, wfops.cli.app
print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))
"""


def loaded_top_level_modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=process_env())
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_module() -> None:
    loaded = loaded_top_level_modules(PROBE)
    assert "wfops" in loaded and "typer" in loaded  # the probe really imported the CLI
    assert sorted(loaded & set(HEAVY)) == []


def test_the_entry_point_leaves_typer_for_later() -> None:
    # `wfops validate` (pre-commit, every commit) is dispatched before typer is imported.
    loaded = loaded_top_level_modules(PROBE.replace("import wfops.cli.main, wfops.cli.app", "import wfops.cli.main"))
    assert "wfops" in loaded and "typer" not in loaded


def test_the_probe_can_fail() -> None:
    # The same probe sees a heavy import when one happens, so the test above is not vacuous.
    loaded = loaded_top_level_modules(PROBE.replace("import wfops.cli.main", "import wfops.cli.main, sqlite3"))
    assert "sqlite3" in loaded


def test_python_m_wfops_help() -> None:
    done = subprocess.run([*WFOPS, "--help"], capture_output=True, text=True, timeout=60, env=process_env())
    assert done.returncode == 0, done.stderr
    assert "Usage: wfops" in done.stdout and "╭" not in done.stdout  # plain help, no rich boxes
    assert "Usage:" in done.stdout and "validate" in done.stdout and "schema" in done.stdout
    assert done.stderr == ""


HIT = """
import json, sys
from wfops.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    print(exc.code)
print(json.dumps(sorted(sys.modules)))
"""

# Everything wfops a whole-project cache hit may load: the entry point, the command table and
# its parser (data and one small module: no command module), the replay, the key.
HIT_MODULES = {"wfops", "wfops.errors", "wfops.cli", "wfops.cli.main", "wfops.exits", "wfops.cli.fastparse",
               "wfops.cli.argtable", "wfops.fastpath", "wfops.fastpath.replay", "wfops.fastpath.snapshot", "wfops.loader",
               "wfops.loader.root", "wfops.loader.testfiles", "wfops.sources", "wfops.sources.modules",
               "wfops.canonical",  # the one sha256 of a key (the C module, not OpenSSL)
               "wfops.statedir",  # a hit never reads a cache through a symlinked .wfops (a few lstat calls)
               "wfops.cli.pipes"}  # `wfops validate | head -1` too drops what the closed pipe cannot take


@pytest.mark.parametrize("args", [["validate"], ["validate", "--format", "json"]], ids=["text", "json"])
def test_a_validate_cache_hit_loads_only_the_key_and_the_replay(make_project, args: list[str]) -> None:
    # A project with findings: the replay answers errors too, with their exit code.
    root = make_project({"workflows/w.yaml": "name: w\nsteps:\n  - id: a\n    uses: nope.x\n    next: end\n"})
    runs = [subprocess.run([sys.executable, "-c", HIT, *args], cwd=root, capture_output=True, text=True, timeout=60,
                           env=process_env()) for _ in range(2)]
    *_, code, loaded_json = runs[1].stdout.splitlines()
    loaded = set(json.loads(loaded_json))
    assert runs[0].stdout.splitlines()[:-1] == runs[1].stdout.splitlines()[:-1] and code == "1"
    assert {m for m in loaded if m.split(".")[0] == "wfops"} == HIT_MODULES
    assert sorted(loaded & {"dataclasses", "hashlib", "_hashlib", "inspect", "wfops.diagnostics"}) == []
    # the first run (a miss) did the work: the probe sees a miss load what a hit spares
    assert "wfops.diagnostics" in json.loads(runs[0].stdout.splitlines()[-1])


def test_version_is_printed_before_any_parser_is_built(tmp_path) -> None:
    # `wfops --version` answers from the entry point: no command table parse, no typer.
    done = subprocess.run([sys.executable, "-c", HIT, "--version"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=process_env())
    version, code, loaded_json = done.stdout.splitlines()
    loaded = set(json.loads(loaded_json))
    assert (version.split()[0], code) == ("wfops", "0")
    assert sorted(loaded & {"typer", "click", "wfops.cli.app", "pydantic"}) == []


# What a cold validate leaves unloaded when the project has no use for it: a fresh clone (CI)
# pays every module at start-up. A schedule (cron, time zones), a Dask executor (the address
# parser), test files (their checks), an MCP or python source (the lock's reader, the contract
# record) and a hint that names the closest choice (difflib) each load theirs when needed.
# `dataclasses`, with `inspect` (and `ast`, `dis`, `tokenize`), comes with a python source
# (pydantic): the records a validate shares are plain classes (`wfops.records`).
RECORDS = {"dataclasses", "inspect"}
SPARED = {"cronsim", "zoneinfo", "difflib", "wfops.lockfile", "wfops.fastpath.contracts", "wfops.sources.scheduler",
          "wfops.compiler.checks.wftests", *RECORDS}
PLAIN = {"workflows/w.yaml": "name: w\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    next: end\n",
         "deployments/d.yaml": "name: d\nworkflow: w\n"}


def cold_validate_modules(root) -> set[str]:
    done = subprocess.run([sys.executable, "-c", HIT, "validate"], cwd=root, capture_output=True, text=True,
                          timeout=60, env=process_env())
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_a_cold_validate_loads_only_what_the_project_uses(make_project) -> None:
    loaded = cold_validate_modules(make_project(PLAIN))
    assert "wfops.compiler.validate" in loaded  # the checks ran: the cache missed
    assert sorted(loaded & SPARED) == []


def test_a_project_that_uses_them_loads_them(make_project) -> None:
    # The same probe sees each spared module where the project needs it, so the test above is not vacuous.
    root = make_project({
        **PLAIN,
        "deployments/d.yaml": "name: d\nworkflow: w\nexecutor: {kind: dask, address: 'tcp://127.0.0.1:8786'}\n"
                              "schedule:\n  - cron: '0 * * * *'\n",
        "workflows/w.yaml": PLAIN["workflows/w.yaml"].replace("next: end", "next: ennd"),
        "tests/w.wftest.yaml": "workflow: w\ncases:\n  - name: one\n    expect: {status: completed}\n",
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
        "ops.py": "import wfops\n\n\n@wfops.node\ndef run(payload: dict) -> dict:\n    return payload\n"})
    loaded = cold_validate_modules(root)
    assert sorted(SPARED - loaded) == []


# The benchmark's own one-file std-only project (20 steps of every kind: calls, conditions, a
# foreach over a subworkflow, an interrupt, typed state, schemas), made by its generator.
GENERATE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import bench_validate
bench_validate.generate(Path(sys.argv[2]), 1, python=False)
"""


def test_a_cold_validate_of_the_benchmarks_std_only_file_loads_no_dataclasses(tmp_path) -> None:
    subprocess.run([sys.executable, "-c", GENERATE, str(REPO / "bench"), str(tmp_path / "std")], check=True,
                   timeout=60, env=process_env())
    assert not (tmp_path / "std" / "benchops").exists()  # no python source: std calls only
    loaded = cold_validate_modules(tmp_path / "std")
    assert "wfops.compiler.validate" in loaded and "wfops.compiler.checks.dataflow" in loaded  # every check ran
    assert sorted(loaded & {*RECORDS, "ast", "dis", "tokenize"}) == []
