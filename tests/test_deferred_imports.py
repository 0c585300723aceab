"""Imports sit at module top. An import inside a function is there because a hot command
must not pay for it, and says why in one line:

    # deferred: <why>

on the import's own line or the line directly above it (one such line above the first of a
run of consecutive imports covers the run). Imports under `if TYPE_CHECKING:` load nothing
and do not count.

What the hot commands load is then observed, not argued: each runs in a fresh interpreter in
a one-step project, and the heavy libraries it loaded must be exactly the ones it needs. The
hot commands are the validate cache hit (pre-commit, every commit; both of its routes),
`check`, `runs list`, a run of an unchanged deployment (from its gate record), and a valid
project validated and run from scratch (without pydantic).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "wfops"

REASON = re.compile(r"#\s*deferred:\s*\S.*\S")

# Libraries that cost start-up time (`python3 -X importtime`, Python 3.11); a name covers its
# submodules.
HEAVY = ("asyncio", "pydantic", "pydantic_core", "ruamel", "jsonschema", "referencing", "regex", "mcp", "anyio",
         "httpx", "watchfiles", "typer", "rich", "concurrent.futures", "logging", "sqlite3", "psycopg", "dask",
         "distributed")

RUN = ("asyncio", "concurrent.futures", "logging", "sqlite3")  # the engine's event loop and the store
# command line -> the heavy libraries it loads, in a valid one-step project.
HOT = {
    "validate, cache hit (its report replayed)": (["validate"], ()),
    "validate, cache hit (its findings rebuilt)": (["validate", "--format", "github"], ()),
    "check": (["check"], ("ruamel",)),
    "runs list": (["runs", "list", "--limit", "20"], ("sqlite3",)),
    "run, from the gate record": (["run", "one.local", "--json"], RUN),
    "validate, cache miss": (["validate"], ("ruamel",)),
    "run, first after a change": (["run", "one.local", "--json"], ("ruamel", *RUN)),
}


def function_level_imports(text: str) -> list[tuple[int, bool]]:
    """(line, has a reason) of each import statement inside a function."""
    lines = text.splitlines()
    found: list[tuple[int, bool]] = []

    def walk(body: list[ast.stmt], in_function: bool) -> None:
        covered = False  # the run of imports this one continues has a reason
        for statement in body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                if in_function:
                    own = statement.lineno - 1
                    covered = covered or bool(REASON.search(lines[own])) or \
                        (own > 0 and lines[own - 1].strip().startswith("#") and bool(REASON.search(lines[own - 1])))
                    found.append((statement.lineno, covered))
                continue
            covered = False
            if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
                walk(statement.orelse, in_function)
                continue
            nested = in_function or isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(statement, name, [])
                for child in children:
                    if isinstance(child, ast.excepthandler | ast.match_case):
                        walk(child.body, nested)
                walk([c for c in children if isinstance(c, ast.stmt)], nested)

    walk(ast.parse(text).body, False)
    return found


def test_the_scan_sees_the_imports() -> None:
    text = ("import a\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b\n"
            "def f():\n    import c  # deferred: c is slow\n    import d\n\n    x = 1\n    import e\n"
            "    # deferred: g is slow,\n    # and says so on two lines\n    import g\n"
            "    try:\n        # deferred: h is slow\n        import h\n    except ImportError:\n        pass\n")
    assert function_level_imports(text) == [(6, True), (7, True), (10, False), (13, False), (16, True)]


def test_each_deferred_import_says_why_in_one_line() -> None:
    missing = [f"{path.relative_to(REPO)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
               for line, why in function_level_imports(path.read_text(encoding="utf-8")) if not why]
    assert missing == [], "move these imports to module top, or say why one line above: # deferred: <why>"


PROBE = """
import json, sys
from wfops.cli.main import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, sorted(sys.modules)]))
"""

FILES = {"sources.yaml": "sources: {}\n",
         "workflows/one.yaml": "name: one\nsteps:\n  - {id: a, uses: std.echo, with: {value: 1}, next: end}\n",
         "deployments/one.yaml": "name: one.local\nworkflow: one\n"}


@cache
def loaded() -> dict[str, set[str]]:
    """Per hot command, every module it loaded (each in a fresh interpreter, in the order a
    user meets them: first runs are misses, the second ones hits)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    order = ["validate, cache miss", "validate, cache hit (its report replayed)",
             "validate, cache hit (its findings rebuilt)", "compile", "check", "run, first after a change",
             "run, from the gate record", "runs list"]
    out: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as project:
        for name, text in FILES.items():
            Path(project, name).parent.mkdir(exist_ok=True)
            Path(project, name).write_text(text, encoding="utf-8")
        for label in order:
            args = ["compile"] if label == "compile" else HOT[label][0]  # `check` needs a lock
            if label == "run, first after a change":  # compile left the gate record: a change misses it
                shutil.rmtree(Path(project, ".wfops", "cache", "runs"))
            done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], cwd=project, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            code, modules = json.loads(done.stdout.splitlines()[-1])
            assert code == 0, (label, done.stdout)
            out[label] = set(modules)
    return out


def heavy(modules: set[str]) -> list[str]:
    return sorted(h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in modules))


@pytest.mark.slow
@pytest.mark.parametrize("label", list(HOT))
def test_a_hot_command_loads_only_the_heavy_libraries_it_needs(label: str) -> None:
    assert heavy(loaded()[label]) == sorted(HOT[label][1])


@pytest.mark.slow
def test_the_hit_paths_are_the_ones_observed() -> None:
    runs = loaded()
    replayed = runs["validate, cache hit (its report replayed)"]
    assert "wfops.fastpath.replay" in replayed and "wfops.api.validate" not in replayed
    rebuilt = runs["validate, cache hit (its findings rebuilt)"]
    assert {"wfops.api.validate", "wfops.report.github"} <= rebuilt and "wfops.compiler.validate" not in rebuilt
    assert "wfops.fastpath.gate" in runs["run, from the gate record"]
    assert "wfops.compiler.validate" not in runs["run, from the gate record"]  # no checks: the record served
    assert "wfops.compiler.validate" in runs["run, first after a change"]  # the probe sees a miss do the work
