"""Imports inside functions only where a heavy library is deferred for start-up time, each
with its reason. (`wfops validate` runs in pre-commit on every commit; see also
tests/cli/test_startup.py.)

Every import statement inside a function in `wfops/` (imports under `if TYPE_CHECKING:` load
nothing and do not count) must

(a) say why: a comment containing `deferred:` and a reason, on the statement's own lines or
    in the comment block directly above it; one such comment above the first statement of a
    run of consecutive import statements covers the run. E.g.
        # deferred: pydantic (~30 ms), not needed when the validate cache hits

(b) be a real deferral, one of:
    - heavy: it loads a HEAVY package (below, with what `python3 -X importtime` measured) that
      its module does not load already, either directly or through a `wfops` module whose
      module-level import closure reaches one. The closure is static: module-level imports,
      parent packages included, `if TYPE_CHECKING:` imports excluded;
    - a cycle: the pair is in CYCLES with its reason, the imported module's closure really
      reaches the importer (so importing it at module level would close a cycle), and the
      comment says `cycle`;
    - the validate cache-hit path: the importing module is loaded by `wfops validate` when its
      cache hits (pre-commit, every commit), the imported one is not, and the comment says
      `cache-hit path`. A hit has two routes (the stored report replayed, or the stored
      findings rebuilt for paths and the GitHub/SARIF formats); either counts. What the path
      loads is observed, by running it in a fresh interpreter;
    - the record-hit path, likewise: loaded by a `wfops run` of an unchanged deployment (it
      starts from its gate record), the imported one not, and the comment says `record-hit path`.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "wfops"

# Cumulative `python3 -X importtime -c 'import X'` times (best of 5, Python 3.11, no .pyc
# files written). A name covers its submodules.
HEAVY = {
    "asyncio": "~33 ms",
    "pydantic": "~31 ms",
    "pydantic_core": "~20 ms",
    "ruamel": "~11 ms (ruamel.yaml)",
    "jsonschema": "~60 ms",
    "referencing": "~35 ms",
    "regex": "~9 ms (schema `pattern`s under a time limit)",
    "mcp": "~1.7 s",
    "anyio": "~9 ms",
    "httpx": "(an mcp dependency)",
    "watchfiles": "~22 ms",
    "typer": "~33 ms",
    "rich": "(typer's renderer)",
    "importlib.resources": "~15 ms where site has not loaded it already",
    "concurrent.futures": "~9 ms (most of it logging)",
    "logging": "~8 ms",
    "sqlite3": "~3 ms and a shared library; tests/cli/test_startup.py keeps it out of the CLI",
    "psycopg": "~100 ms (with libpq, on a loaded machine); only a PostgreSQL store loads it",
    "dask": "(distributed's base; the dask extra)",
    "distributed": "~320 ms (the dask extra, only for runs on a Dask cluster)",
}

# (importing module, imported module): why the import stays inside a function.
CYCLES = {
    ("wfops.engine.run", "wfops.engine.steps"):
        "steps implements the step kinds on top of run's RunContext and imports it",
}

DEFERRED = re.compile(r"#.*\bdeferred:\s*\S+\s+\S+")


@dataclass(frozen=True)
class Inner:
    """An import statement inside a function."""

    module: str  # the importing module
    line: int
    targets: tuple[str, ...]  # what it loads: `from m import x` loads m, and m.x if that is a module
    reason: str  # its `deferred:` comment ("" when there is none)

    def where(self) -> str:
        return f"{self.module}:{self.line} ({', '.join(self.targets)})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def files() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> tuple[str, ...]:
    if isinstance(node, ast.Import):
        return tuple(alias.name for alias in node.names)
    base = node.module or ""
    if node.level:
        package = module.split(".") if files()[module].name == "__init__.py" else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    names = [f"{base}.{alias.name}" for alias in node.names]
    return (base, *(n for n in names if n in files() or not base.startswith("wfops")))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _reason(lines: list[str], first: int, last: int) -> str:
    """The `deferred:` comment on lines first..last (1-based) or in the comment block above."""
    above = first - 1
    while above >= 1 and lines[above - 1].strip().startswith("#"):
        above -= 1
    block = lines[above:last]
    if any(DEFERRED.search(line) for line in block):
        return " ".join(line.strip() for line in block if "#" in line)
    return ""


class _Scan:
    def __init__(self, module: str, text: str) -> None:
        self.module = module
        self.lines = text.splitlines()
        self.top: set[str] = set()
        self.inner: list[Inner] = []
        self.walk(ast.parse(text).body, in_function=False)

    def walk(self, body: list[ast.stmt], *, in_function: bool) -> None:
        run_reason = ""  # the reason of the run of import statements this one continues
        for statement in body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                targets = _targets(self.module, statement)
                if in_function:
                    own = _reason(self.lines, statement.lineno, statement.end_lineno or statement.lineno)
                    run_reason = own or run_reason
                    self.inner.append(Inner(self.module, statement.lineno, targets, run_reason))
                else:
                    self.top.update(targets)
                continue
            run_reason = ""
            if isinstance(statement, ast.If) and _is_type_checking(statement.test):
                self.walk(statement.orelse, in_function=in_function)
                continue
            nested = in_function or isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(statement, name, [])
                for child in children:
                    if isinstance(child, ast.excepthandler | ast.match_case):
                        self.walk(child.body, in_function=nested)
                stmts = [c for c in children if isinstance(c, ast.stmt)]
                if stmts:
                    self.walk(stmts, in_function=nested)


@cache
def scans() -> dict[str, _Scan]:
    return {module: _Scan(module, path.read_text(encoding="utf-8")) for module, path in files().items()}


def function_level_imports() -> list[Inner]:
    return [item for scan in scans().values() for item in scan.inner]


@cache
def closure(module: str) -> frozenset[str]:
    """Every module that importing `module` loads (statically; other packages are not followed)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in files():
            todo += [p for p in _parents(name) if p in files()]
            todo += scans()[name].top
    return frozenset(seen)


def heavy_in(modules: frozenset[str]) -> set[str]:
    return {h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")}


def spares(item: Inner) -> set[str]:
    """The HEAVY packages the import loads that its module does not load already."""
    loads = frozenset().union(*(closure(t) for t in item.targets))
    return heavy_in(loads) - heavy_in(closure(item.module))


HIT = """
import json, sys
from wfops.cli.main import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

# A cache hit takes one of two routes: the whole project in text or JSON replays the stored
# report (pre-commit); paths or the GitHub/SARIF formats rebuild the stored findings.
HIT_ROUTES = {"report": ["validate"], "findings": ["validate", "--format", "github"]}


@cache
def cache_hit_modules(route: str = "report") -> frozenset[str]:
    """Every module `wfops validate` loads when its cache hits (the second run in a project)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as project:
        Path(project, "sources.yaml").write_text("sources: {}\n", encoding="utf-8")
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", HIT, json.dumps(HIT_ROUTES[route])], cwd=project, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
    loaded = frozenset(json.loads(done.stdout.splitlines()[-1]))
    assert "wfops.fastpath.snapshot" in loaded and "ruamel.yaml" not in loaded  # a hit: no YAML parsed
    return loaded


RECORD_HIT = """
import json, sys
from wfops.cli.main import main
try:
    main(["run", "one.local", "--json"])
except SystemExit as exc:
    assert exc.code == 0, exc.code
print(json.dumps(sorted(sys.modules)))
"""


@cache
def record_hit_modules() -> frozenset[str]:
    """Every module `wfops run` loads when it starts from its gate record (an unchanged project)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as project:
        for name, text in {"sources.yaml": "sources: {}\n",
                           "workflows/one.yaml": "name: one\nsteps:\n  - {id: a, uses: std.echo, with: {value: 1}, "
                                                 "next: end}\n",
                           "deployments/one.yaml": "name: one.local\nworkflow: one\n"}.items():
            Path(project, name).parent.mkdir(exist_ok=True)
            Path(project, name).write_text(text, encoding="utf-8")
        compiled = subprocess.run([sys.executable, "-m", "wfops", "compile"], cwd=project, env=env,
                                  capture_output=True, text=True, timeout=120)
        assert compiled.returncode == 0, compiled.stderr
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", RECORD_HIT], cwd=project, env=env, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, done.stderr
    loaded = frozenset(json.loads(done.stdout.splitlines()[-1]))
    assert "wfops.fastpath.gate" in loaded and "ruamel.yaml" not in loaded  # a hit: no YAML parsed
    return loaded


def _real_deferral(item: Inner) -> bool:
    if spares(item):
        return True
    if any((item.module, t) in CYCLES for t in item.targets):
        return "cycle" in item.reason
    if "cache-hit path" in item.reason:
        return any(item.module in hit and not hit & set(item.targets)
                   for hit in (cache_hit_modules(route) for route in HIT_ROUTES))
    if "record-hit path" in item.reason:
        hit = record_hit_modules()
        return item.module in hit and not hit & set(item.targets)
    return False


def test_the_scan_sees_the_imports() -> None:
    inner = function_level_imports()
    assert "wfops.errors" in scans()["wfops.cli.main"].top
    assert any(i.module == "wfops.cli.main" and "typer" in i.targets for i in inner)
    assert not any(i.module == "wfops" for i in inner)  # `if TYPE_CHECKING:` imports do not count
    assert "wfops.runner.execute" in closure("wfops.runner.progress")  # parent packages count
    assert "typer" in heavy_in(closure("wfops.cli.app"))
    assert "typer" not in heavy_in(closure("wfops.cli.main"))


def test_each_deferred_import_says_why() -> None:
    missing = [i.where() for i in function_level_imports() if not i.reason]
    assert missing == [], "an import inside a function needs a `# deferred: <why>` comment"


def test_each_deferred_import_is_heavy_a_cycle_or_off_the_cache_hit_path() -> None:
    cheap = [i.where() for i in function_level_imports() if not _real_deferral(i)]
    assert cheap == [], "cheap imports inside functions: move them to module level"


def test_the_cycles_are_real() -> None:
    inner = {(i.module, t) for i in function_level_imports() for t in i.targets}
    for (importer, imported), why in CYCLES.items():
        assert why
        assert (importer, imported) in inner, f"{importer} no longer defers {imported}: drop the entry"
        assert importer in closure(imported), f"{importer} -> {imported} closes no cycle"


def test_the_cache_hit_path_is_observed() -> None:
    hit = cache_hit_modules("findings")
    assert {"wfops.cli.validate_fast", "wfops.api.validate", "wfops.report.github"} <= hit
    assert "wfops.compiler.validate" not in hit  # the checks run only on a miss
    replayed = cache_hit_modules("report")
    assert "wfops.fastpath.replay" in replayed and "wfops.api.validate" not in replayed
