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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError

_stdout_lock = threading.Lock()
_stdout_users = 0
_stdout_saved: Any = None


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """While user code runs, its `print`s go to stderr: wfops's stdout carries `--json` output.

    Calls overlap (parallel foreach, threads), so the swap is counted: the first
    caller in swaps sys.stdout, the last one out restores it.
    """
    global _stdout_users, _stdout_saved
    with _stdout_lock:
        if _stdout_users == 0:
            _stdout_saved, sys.stdout = sys.stdout, sys.stderr
        _stdout_users += 1
    try:
        yield
    finally:
        with _stdout_lock:
            _stdout_users -= 1
            if _stdout_users == 0:
                sys.stdout, _stdout_saved = _stdout_saved, None


class ModuleOutsideProject(WfopsError):
    pass


def module_file(root: Path, module: str) -> Path:
    """The file a dotted module name points at inside `root`; refuses escapes and missing files."""
    root = root.resolve()
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            resolved = candidate.resolve()
            if not resolved.is_relative_to(root):
                raise ModuleOutsideProject(f"module {module!r} resolves to {resolved}, outside the project")
            return resolved
    raise ModuleNotFoundError(f"no module {module!r} in the project (looked for {base.relative_to(root)}.py)")


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
    # A print at import time must not land in wfops's stdout: `--format json`/`sarif`
    # and `--json` output there is read by machines.
    before = set(sys.modules)
    recorder = _LookupRecorder(root)
    sys.meta_path.insert(0, recorder)
    try:
        with prints_to_stderr():
            loaded = importlib.import_module(module)
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


def consulted_files(root: Path) -> set[str]:
    """The places under `root` that importing its python sources looked at (see `_CONSULTED`)."""
    return set(_CONSULTED.get(root.resolve(), ()))


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
    names = _IMPORTED.pop(root.resolve(), set())
    dropped = [name for name in names if sys.modules.pop(name, None) is not None]
    if dropped or looked:
        # Also after a failed import: the finders' cached folder listings would not see a
        # module file created since (within the folder's mtime granularity).
        importlib.invalidate_caches()
