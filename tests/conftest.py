"""Shared fixtures: real temp project directories, real files."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import mcpfork
from tests.pgserver import pg_cluster, pg_url  # noqa: F401 - fixtures for every test module
from wfops.redact import forget

REPO = Path(__file__).resolve().parent.parent

# Bytecode is written while the suite runs, whatever the environment says
# (PYTHONDONTWRITEBYTECODE): otherwise every `wfops` process a test starts compiles the
# modules it imports from source again (~0.25 s of CPU for the CLI and the MCP server), and
# every xdist worker compiles and assertion-rewrites every test module again. Set before the
# workers and the tests' processes start, so they inherit it; `__pycache__` is ignored by git.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


_MCPFORK = pytest.StashKey[object]()


@pytest.hookimpl(trylast=True)  # after the tmpdir plugin's, which makes the basetemp factory
def pytest_configure(config: pytest.Config) -> None:
    """The session's MCP fork server (tests/mcpfork.py): the test MCP servers are forked from
    one process that has imported the SDK, not each started by a fresh interpreter importing
    it again (~1.3 s of CPU each, a hundred times a run). Started by the controller, in the
    session's basetemp, under which every test project (and xdist worker's basetemp) lies."""
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    config.stash[_MCPFORK] = mcpfork.start(config._tmp_path_factory.getbasetemp())


def pytest_unconfigure(config: pytest.Config) -> None:
    started = config.stash.get(_MCPFORK, None)
    if started is not None:
        mcpfork.stop(started)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Before the other hooks (xdist's reads the `xdist_group` marks): a module whose tests share
    a module-scoped fixture (a compiled project, a cluster, a server session) becomes one xdist
    group, so that under `--dist loadgroup` one worker runs its tests and builds the fixture
    once, rather than both workers building it; a module that names its own group keeps it.

    After them: the modules holding slow tests run first, each module kept together (its module
    fixtures are built once per worker): xdist hands tests out in this order, so the last minute
    is short tests filling in on both workers rather than one worker finishing a long test alone."""
    shared = {item.path for item in items if _uses_module_fixture(item)}
    for item in items:
        if item.path in shared and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(str(item.path.relative_to(REPO))))
    yield
    slow_modules = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_modules)  # stable: order within each part kept


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A `no_cover` test runs untraced in an xdist worker too. There pytest-cov starts two
    coverage collectors, and its own pause of `no_cover` stops only the newer one, which
    hands tracing back to the older: the test ran traced, several times slower. Running
    inside pytest-cov's pause (trylast), this takes off whatever tracer is still set, for the
    test's thread and the threads it starts, and puts it back after."""
    if item.get_closest_marker("no_cover") is None:
        return (yield)
    tracer, hook = sys.gettrace(), threading.gettrace()
    sys.settrace(None)
    threading.settrace(None)  # type: ignore[arg-type]  # None removes the hook
    try:
        return (yield)
    finally:
        threading.settrace(hook)  # type: ignore[arg-type]
        sys.settrace(tracer)


def _uses_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values())


#: `sys.path` once collection has imported every test module (`pytest_collection_finish`).
_SESSION_PATH: list[str] = []


@pytest.fixture(autouse=True)
def _sys_path_as_collected() -> Iterator[None]:
    """Each test ends with `sys.path` as collection left it, as a new `wfops` process starts
    with one of its own. Left as it was, the path carries what earlier tests added: a
    LocalCluster's scheduler in the test process puts its folder under /tmp/dask-scratch-space
    there, whose mtime moves whenever any cluster of either worker starts or stops a worker;
    a gate record keys on the path's folders and their mtimes (`wfops.fastpath.snapshot`), so
    a run's record, written and read in one test, missed whenever the other worker's Dask
    tests ran in between."""
    yield
    if _SESSION_PATH:
        sys.path[:] = _SESSION_PATH


@pytest.fixture(autouse=True)
def _no_declared_secrets():
    """Each test starts with no secret declared to the process's redactor, as a new `wfops`
    process does (a test's secrets would otherwise mask text in later tests)."""
    forget()
    yield
    forget()


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def make_project(tmp_path: Path):
    """make_project({"sources.yaml": ..., "workflows/a.yaml": ...}) -> project root."""

    def make(files: dict[str, str]) -> Path:
        files = {"sources.yaml": "sources: {}\n", **files}
        return write(tmp_path, files)

    return make


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `PRE_COMMIT_HOME` for the whole test session, shared by the xdist workers: a hook
    environment (a virtualenv with wfops installed, ~10 s) is built once per repository,
    revision and `additional_dependencies`, then reused by every test that runs that hook.
    pre-commit takes a file lock on this directory while it clones or builds, so two workers
    asking at once build it once."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's basetemp sits in the session's own directory.
    session = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    home = session / "pre-commit-home"
    home.mkdir(exist_ok=True)
    return home


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collected tests, their modules and what those imported live until the session
    ends: frozen out of the cyclic garbage collector's view, and collections made rarer, so
    that the collector does not walk them all again every few hundred allocations (a worker
    spent ~5 s of the fast lane in it; the lane's CPU went from ~115 s to ~95 s, paired)."""
    _SESSION_PATH[:] = sys.path
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)
