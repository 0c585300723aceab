"""Loading a project's python modules: from the project only, fresh per project, prints kept
off stdout. No pydantic here: `wfops validate` forgets project modules on every call and
must stay cheap when its cache hits.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError

_stdout_lock = threading.Lock()
_stdout_users = 0
_stdout_saved: Any = None
_fd1_saved: int | None = None


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """While user code runs, what it writes to stdout goes to stderr: wfops's stdout carries
    `--json`, `--format json` and `sarif` output, which machines read.

    Both levels are moved: `sys.stdout` (a `print`) and file descriptor 1 itself, which a
    child process the node starts inherits, and C code or `os.write(1, ...)` write to.
    Calls overlap (parallel foreach, threads), so the swap is counted: the first caller in
    moves both, the last one out restores them.
    """
    global _stdout_users, _stdout_saved, _fd1_saved
    with _stdout_lock:
        if _stdout_users == 0:
            _fd1_saved = _point_fd1_at_stderr()
            _stdout_saved, sys.stdout = sys.stdout, sys.stderr
        _stdout_users += 1
    try:
        yield
    finally:
        with _stdout_lock:
            _stdout_users -= 1
            if _stdout_users == 0:
                sys.stdout, _stdout_saved = _stdout_saved, None
                _restore_fd1(_fd1_saved)
                _fd1_saved = None


def _point_fd1_at_stderr() -> int | None:
    """A copy of fd 1 to restore later, after pointing fd 1 at fd 2; None when either is closed
    (nothing to protect, or nowhere to send it)."""
    with contextlib.suppress(Exception):  # wfops's own buffered output belongs on the real stdout
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return None
    return saved


def _restore_fd1(saved: int | None) -> None:
    if saved is None:
        return
    with contextlib.suppress(Exception):  # what user code left buffered belongs on stderr
        sys.stderr.flush()
    try:
        os.dup2(saved, 1)
    finally:
        os.close(saved)


_cwd_lock = threading.Lock()
_cwd_users = 0
_cwd_saved: str | None = None


@contextlib.contextmanager
def in_project_dir(root: Path | None) -> Iterator[None]:
    """While project code runs (a module's import, a node), the working directory is the
    project root: `open("data/x.csv")` in a node means the same file whether wfops was
    started in the root or in `data/`.

    Counted like `prints_to_stderr` (calls overlap); the first caller in changes directory,
    the last one out goes back. A call while another project's code runs keeps the
    directory it finds (one process, one working directory).
    """
    global _cwd_users, _cwd_saved
    if root is None:
        yield
        return
    with _cwd_lock:
        if _cwd_users == 0:
            try:
                _cwd_saved = os.getcwd()
            except OSError:  # the directory wfops started in was removed
                _cwd_saved = None
            with contextlib.suppress(OSError):
                os.chdir(root)
        _cwd_users += 1
    try:
        yield
    finally:
        with _cwd_lock:
            _cwd_users -= 1
            if _cwd_users == 0:
                if _cwd_saved is not None:
                    with contextlib.suppress(OSError):
                        os.chdir(_cwd_saved)
                _cwd_saved = None


class ModuleOutsideProject(WfopsError):
    pass


def module_file(root: Path, module: str) -> Path:
    """The file Python will import for a dotted module name with `root` first on sys.path.

    Found by Python's own path finder, so the answer is the one the import will take (a
    package directory `ops/` wins over `ops.py` beside it), yet nothing is executed: each
    package on the way is looked up inside the one before, not imported. The module, and
    every package and namespace directory on the way, must resolve inside `root` (a
    symlink out of the project is refused before any of its code could run).
    """
    root = root.resolve()
    parts = module.split(".")
    search = [str(root)]
    origin: str | None = None
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = PathFinder.find_spec(name, search) if search else None
        if spec is None:
            looked = root.joinpath(*parts).relative_to(root)
            raise ModuleNotFoundError(f"no module {module!r} in the project (looked for {looked}.py)")
        origin = spec.origin if spec.has_location else None
        for place in [*([origin] if origin else []), *(spec.submodule_search_locations or [])]:
            resolved = Path(place).resolve()
            if not resolved.is_relative_to(root):
                what = "module" if depth == len(parts) else "package"
                raise ModuleOutsideProject(f"{what} {name!r} resolves to {resolved}, outside the project")
        search = list(spec.submodule_search_locations or [])
    if origin is None:  # a directory without __init__.py: nothing to import nodes from
        raise ModuleNotFoundError(f"no module {module!r} in the project ({module.replace('.', '/')}/ is a "
                                  "directory without __init__.py)")
    return Path(origin).resolve()


def import_project_module(root: Path, module: str) -> Any:
    """Import a project module by name with the project root first on sys.path, checking where it came from."""
    root = root.resolve()
    # Recorded before anything can fail: a module that does not exist yet is a place that was looked at.
    _CONSULTED.setdefault(root, set()).update(_candidates(root, module))
    module_file(root, module)
    parts = module.split(".")
    for depth in range(1, len(parts)):
        init = root.joinpath(*parts[:depth], "__init__.py")
        if init.exists() and not init.resolve().is_relative_to(root):
            raise ModuleOutsideProject(f"package {'.'.join(parts[:depth])!r} resolves outside the project")
    _forget_other_projects(root, parts[0])
    if str(root) in sys.path:
        sys.path.remove(str(root))
    sys.path.insert(0, str(root))  # first: another project loaded before must not shadow this one
    _ON_PATH.add(str(root))
    # A print at import time must not land in wfops's stdout: `--format json`/`sarif`
    # and `--json` output there is read by machines.
    before = set(sys.modules)
    recorder = _LookupRecorder(root)
    sys.meta_path.insert(0, recorder)
    try:
        with prints_to_stderr(), in_project_dir(root):
            loaded = _import_within_limit(root, module)
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(recorder)
        _CONSULTED[root].update(recorder.seen)
        # What this import brought in from the project (the module, its packages, what it
        # imports from the project) is what a later `forget_project_modules` drops.
        _IMPORTED.setdefault(root, set()).update(
            name for name in set(sys.modules) - before if _is_under(sys.modules[name], root))
    origin = getattr(loaded, "__file__", None)
    if origin is None or not Path(origin).resolve().is_relative_to(root):
        raise ModuleOutsideProject(
            f"module {module!r} was imported from {origin}, not from the project; rename it to avoid the clash")
    _PROJECT_OF[parts[0]] = root
    return loaded


class ImportTimedOut(WfopsError):
    pass


#: Seconds a python source may take to import; WFOPS_IMPORT_TIMEOUT overrides.
IMPORT_TIMEOUT = 30.0
# (project root, module) -> the thread still stuck importing it. Python's import lock for
# that module stays taken, so a second attempt would hang too: it is refused at once.
_STUCK: dict[tuple[Path, str], threading.Thread] = {}


def import_timeout() -> float:
    value = os.environ.get("WFOPS_IMPORT_TIMEOUT")
    if not value:
        return IMPORT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        raise WfopsError(f"WFOPS_IMPORT_TIMEOUT={value!r} is not a number of seconds",
                         hint="set it to the seconds a python source may take to import, e.g. 30") from None
    if not seconds > 0 or seconds == float("inf"):
        raise WfopsError(f"WFOPS_IMPORT_TIMEOUT={value!r} must be a positive number of seconds",
                         hint="set it to the seconds a python source may take to import, e.g. 30")
    return seconds


def _import_within_limit(root: Path, module: str) -> Any:
    """Import in a daemon thread and stop waiting after the time limit. A module that blocks
    at import (a network call, a lock, `input()`) becomes a finding instead of a `validate`
    (or pre-commit hook) that hangs without a word. The thread cannot be stopped; being a
    daemon, it does not keep the process alive."""
    limit = import_timeout()
    stuck = _STUCK.get((root, module))
    if stuck is not None and stuck.is_alive():
        raise ImportTimedOut(f"importing {module} did not finish: an earlier import of it is still blocked "
                             "in this process", hint=_BLOCKED_HINT + "; restart wfops (watch, mcp) once it is fixed")
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["module"] = importlib.import_module(module)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller, which reports it
            box["error"] = exc

    thread = threading.Thread(target=work, name=f"wfops-import-{module}", daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        _STUCK[(root, module)] = thread
        raise ImportTimedOut(f"importing {module} did not finish within {limit:g} s", hint=_BLOCKED_HINT)
    if "error" in box:
        raise box["error"]
    return box["module"]


_BLOCKED_HINT = ("a module must not block at import (network calls, waiting for input or a lock): do that "
                 "work inside the node function; a slow import may take longer with WFOPS_IMPORT_TIMEOUT=SECONDS")


# Top-level module name -> the project root wfops imported it from. One process may load
# several projects (an embedding program, tests): two projects that both have `ops.py`
# must each get their own, not whichever was imported first.
_PROJECT_OF: dict[str, Path] = {}
# Project root -> the modules importing its python sources brought in from under it.
_IMPORTED: dict[Path, set[str]] = {}
# Project root -> every place under it (relative, posix) where importing its python sources
# looked for a module: files that exist, files that did not (yet), and package folders
# (ending in "/"). Whatever imports found or failed to find depends on exactly these, so a
# cached result keyed by them goes stale when one of them appears, changes or disappears.
_CONSULTED: dict[Path, set[str]] = {}
# Project root -> module files outside the project (path -> [mtime_ns, size]) that a record
# served in this process had loaded when it was made: what is cached from that validation
# depends on them as if they had been imported here.
_LIBRARIES: dict[Path, dict[str, list[int] | None]] = {}
# Every project root `import_project_module` put on sys.path (see `project_roots_on_path`).
_ON_PATH: set[str] = set()


def consulted_files(root: Path) -> set[str]:
    """The places under `root` that importing its python sources looked at (see `_CONSULTED`)."""
    return set(_CONSULTED.get(root.resolve(), ()))


def project_roots_on_path() -> set[str]:
    """The project roots wfops put on `sys.path` to import their python sources: no part of
    the environment a fresh process starts with."""
    return set(_ON_PATH)


def consulted_libraries(root: Path) -> dict[str, list[int] | None]:
    """The module files outside `root` noted by `note_consulted`, with their identity then."""
    return dict(_LIBRARIES.get(root.resolve(), {}))


def note_consulted(root: Path, places: Iterable[str], libraries: Mapping[str, list[int] | None] | None = None) -> None:
    """Count `places` as looked at, and `libraries` as loaded, when their modules' contracts were
    served from a record made by an import that did so: whatever is cached from this validation
    must go stale with them, as after an import."""
    _CONSULTED.setdefault(root.resolve(), set()).update(places)
    _LIBRARIES.setdefault(root.resolve(), {}).update(libraries or {})


def _candidates(root: Path, module: str) -> list[str]:
    """Where `module` and each package above it may live under `root` (relative, posix)."""
    parts = module.split(".")
    if not all(parts):
        return []
    found: list[str] = []
    for depth in range(1, len(parts) + 1):
        base = "/".join(parts[:depth])
        found += [f"{base}.py", f"{base}/__init__.py", f"{base}/"]
    return found


class _LookupRecorder:
    """A meta path finder that finds nothing: it notes where each lookup under the project could
    have found the module, then lets the real finders do the work."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        last = fullname.rpartition(".")[2]
        for entry in ([str(self.root)] if path is None else list(path)):
            rel = os.path.relpath(os.path.abspath(entry), self.root)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                continue  # outside the project: installed packages are not the project's inputs
            base = last if rel == os.curdir else f"{Path(rel).as_posix()}/{last}"
            self.seen.update((f"{base}.py", f"{base}/__init__.py", f"{base}/"))
        return None


def _is_under(module: Any, root: Path) -> bool:
    origin = getattr(module, "__file__", None)
    # A virtualenv inside the project holds installed packages, not project code.
    return isinstance(origin, str) and "site-packages" not in origin and Path(origin).resolve().is_relative_to(root)


def _forget_bytecode(module: Any) -> None:
    """Remove a dropped module's cached bytecode. Python trusts a `.pyc` whose recorded source
    mtime (whole seconds) and size still match: a file rewritten within the second it was
    imported, at the same size (`n: int` -> `n: str`, an agent's quick fix), would otherwise be
    imported again from the bytecode of its old text."""
    cached = getattr(module, "__cached__", None)
    if isinstance(cached, str):
        with contextlib.suppress(OSError):
            os.unlink(cached)


def _forget_other_projects(root: Path, top: str) -> None:
    other = _PROJECT_OF.get(top)
    if other is None or other == root:
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]
    with contextlib.suppress(ValueError):
        sys.path.remove(str(other))
    del _PROJECT_OF[top]
    importlib.invalidate_caches()


def forget_project_modules(root: Path) -> None:
    """Drop the project modules wfops imported from `root`, so the next import reads the files
    again (watch mode, the MCP server, an embedding program). Only those: wfops itself, or a
    test suite, may live under the same root and must stay loaded."""
    looked = _CONSULTED.pop(root.resolve(), None)
    _LIBRARIES.pop(root.resolve(), None)
    names = _IMPORTED.pop(root.resolve(), set())
    dropped = [module for name in names if (module := sys.modules.pop(name, None)) is not None]
    for module in dropped:
        _forget_bytecode(module)
    if dropped or looked:
        # Also after a failed import: the finders' cached folder listings would not see a
        # module file created since (within the folder's mtime granularity).
        importlib.invalidate_caches()
