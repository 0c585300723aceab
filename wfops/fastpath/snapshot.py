"""The one key for "unchanged": a snapshot of everything a recorded result depends on.

Each record (the validate replay, the python sources' contracts, the run gate's decision)
keeps its own payload and one snapshot, built by `build` when the result was computed and
compared by `unchanged` before the result is served. A snapshot holds:

- `files`: wfops files by name and content hash (the whole project's for validate, the ones
  a deployment reads for the gate, none for the contracts), and `listing`: the names of
  every wfops file, so a file added or removed (which may take a name) counts;
- `python`: every place under the project an import loaded or looked at (files imported,
  files that failed to import, places that did not exist yet), with its hash;
- `libraries`: every module file loaded from outside the project, the standard library and
  wfops, with its mtime_ns and size (a PYTHONPATH module, an installed library);
- `path`: `sys.path` outside the project, each directory with its mtime_ns, so a package
  installed, upgraded or removed (its dist-info renamed) changes it;
- `tool`: this wfops (its code, version and Python).

Any difference, or a snapshot this code cannot read, is a miss: the slow path runs. What
user code reads other than modules (environment variables, data files) is not covered.
A hit of `wfops validate` must cost little more than starting Python: this module loads
neither `hashlib` (OpenSSL) nor `dataclasses` nor the YAML loader.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import wfops
from wfops.canonical import sha256
from wfops.loader.testfiles import project_test_files
from wfops.sources.modules import consulted_files, consulted_libraries, project_roots_on_path

# The one format of every record's key. Each record's payload needs no number of its own:
# `tool` changes with any edit of wfops' code, so no record outlives the code that wrote it.
FORMAT = 1
_SITE_DIRS = ("site-packages", "dist-packages")


def input_files(root: Path) -> list[Path]:
    """Every wfops file of the project: sources.yaml, wfops.lock, workflows/, deployments/ and
    the test files (tests/**/*.wftest.yaml)."""
    found = [root / name for name in ("sources.yaml", "wfops.lock") if (root / name).is_file()]
    for folder in ("workflows", "deployments"):
        directory = root / folder
        if directory.is_dir():
            found += sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        elif directory.is_file():
            found.append(directory)  # a finding of its own: removing it must miss
    return found + [root / p.relative_to(root.resolve()) for p in project_test_files(root)]


def listing(root: Path) -> list[str]:
    """The names of every wfops file of the project (`input_files`), relative, posix."""
    return [path.relative_to(root).as_posix() for path in input_files(root)]


def project_files(root: Path) -> dict[str, str | None]:
    """Every wfops file of the project by name -> its content hash."""
    return {rel: file_hash(root / rel) for rel in listing(root)}


def file_hash(path: Path) -> str | None:
    """sha256 of the file's content; None when it cannot be read (missing)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # The same digest; where hashlib is loaded already (a run), OpenSSL's is ~7x faster on
    # a long workflow's file than the C module's.
    return str(sha256(data).hexdigest())


def place_hash(root: Path, rel: str) -> str | None:
    """`rel` as recorded: a file's content hash, or for a folder (`name/`) whether it exists."""
    if rel.endswith("/"):
        return "dir" if (root / rel).is_dir() else None
    return file_hash(root / rel)


def tool_fingerprint() -> str:
    """This wfops (its code, an editable install's included, version and Python): changes
    whenever any of them does, so a result it recorded holds for it only. Read once per
    process: the code a process runs is what it loaded, so a long-lived one (`wfops watch`,
    `wfops mcp`, an embedding program) labels its records with that code even after an
    upgrade on disk, and a newer wfops's records miss for it."""
    global _TOOL
    if _TOOL[0] is not _tool_fingerprint:  # (the function too: tests stand another in)
        _TOOL = (_tool_fingerprint, _tool_fingerprint())
    return _TOOL[1]


_TOOL: tuple[Any, str] = (None, "")


def _tool_fingerprint() -> str:
    digest = sha256(f"{FORMAT}|{sys.version}|{getattr(wfops, '__version__', '')}".encode())
    package = Path(wfops.__file__).parent
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}|{stat.st_mtime_ns}|{stat.st_size}".encode())
    return str(digest.hexdigest())


def python_inputs(root: Path) -> dict[str, str | None]:
    """Every place under `root` whose content decided what importing the python sources gave:
    modules loaded now, and every place an import looked (found or not), with their hashes."""
    places = set(imported_project_files(root)) | consulted_files(root)
    return {rel: place_hash(root, rel) for rel in sorted(places)}


def imported_project_files(root: Path) -> list[str]:
    """Project Python files that are loaded now (after validation imported the python sources)."""
    root = root.resolve()
    prefixes = tuple({str(root) + os.sep, str(Path(os.path.abspath(root))) + os.sep})
    found = set()
    for loaded in _loaded_files():
        # A cheap prefix test first: resolving every loaded module's path costs ~15 ms.
        if loaded.in_site or not loaded.file.startswith(prefixes):
            continue
        path = Path(loaded.file).resolve()
        if path.is_relative_to(root):
            found.add(path.relative_to(root).as_posix())
    return sorted(found)


def import_path(root: Path) -> list[list[Any]]:
    """`sys.path` without the project's own directories (the project is covered place by place)
    and the other projects' roots wfops put there (one process may validate several, and
    importing one's module may take another's root off the path), each entry with its
    directory's mtime_ns (None when it is not a directory). An entry repeated is kept once, where
    it comes first: imports search it there, so a repeat finds nothing new (a program, or a test
    run, that puts a folder on the path again installs nothing)."""
    root = root.resolve()
    ours = project_roots_on_path()
    found: list[list[Any]] = []
    seen: set[str] = set()
    for entry in sys.path:
        if not isinstance(entry, str) or entry in ours or entry in seen:
            continue
        seen.add(entry)
        if not entry or os.path.isabs(entry):  # others are path hooks (an editable install's finder)
            try:
                if Path(entry or os.curdir).resolve().is_relative_to(root):
                    continue
            except OSError:
                pass
        # wfops' own source checkout (PYTHONPATH, an editable install): the tool fingerprint covers
        # its code, and its folder's mtime moves with every file made beside it (coverage data,
        # an editor's swap file), which installs no package.
        found.append([entry, "checkout" if _is_checkout(entry) else _stat(entry, folder=True)])
    return found


def _is_checkout(entry: str) -> bool:
    try:
        here = Path(entry or os.curdir).resolve()
    except OSError:
        return False
    return here == _CHECKOUT


def _source_checkout() -> Path | None:
    """The folder wfops is imported from when it is a source checkout (not an install)."""
    home = Path(wfops.__file__).resolve().parent.parent
    return home if (home / "pyproject.toml").is_file() and (home / "wfops" / "__init__.py").is_file() else None


_CHECKOUT = _source_checkout()


def loaded_libraries(root: Path) -> dict[str, list[int] | None]:
    """Every module file loaded now from outside the project, the standard library and wfops
    (which the tool fingerprint covers), with its mtime_ns and size; and those a record this
    process served had loaded (`note_consulted`), as they were then."""
    root = root.resolve()
    stdlib = os.path.dirname(os.__file__) + os.sep
    skipped = (stdlib, os.path.dirname(wfops.__file__) + os.sep, str(root) + os.sep)
    found = consulted_libraries(root)
    for loaded in _loaded_files():
        # A site-packages folder counts wherever it is, a virtualenv inside the project included.
        if loaded.in_site or not loaded.file.startswith(skipped):
            found[loaded.file] = loaded.identity()
    return found


class _Loaded:
    """A loaded module's file, whether it is in a site-packages folder, and its identity
    (mtime_ns and size) as a snapshot first saw it: the code this process runs is what was
    loaded, so a file rewritten later is not recorded as what ran (its next check misses), and
    a module imported anew is a new `_Loaded`, looked at anew."""

    __slots__ = ("module", "file", "in_site", "_identity", "_read")

    def __init__(self, module: Any, file: str) -> None:
        self.module, self.file = module, file
        self.in_site = any(site in file for site in _SITE_DIRS)
        self._identity: list[int] | None = None
        self._read = False

    def identity(self) -> list[int] | None:
        if not self._read:
            self._identity, self._read = _stat(self.file), True
        return self._identity


def _loaded_files() -> list[_Loaded]:
    """Every loaded module that has a file."""
    global _FOUND
    # The modules by identity (each held by `_FILES`, so no id stands for another module): a
    # process that loaded nothing since the last snapshot, the common case, is answered at once.
    ids = frozenset(map(id, list(sys.modules.values())))
    if ids == _FOUND[0]:
        return _FOUND[1]
    found = []
    for name, module in list(sys.modules.items()):
        known = _FILES.get(name)
        if known is None or known.module is not module:
            origin = getattr(module, "__file__", None)
            known = _FILES[name] = _Loaded(module, origin if isinstance(origin, str) else "")
        if known.file:
            found.append(known)
    if len(_FILES) > len(sys.modules) + 512:  # modules dropped since (other projects' sources)
        for name in _FILES.keys() - sys.modules.keys():
            del _FILES[name]
    _FOUND = (ids, found)
    return found


#: Each loaded module by name, as first seen: a process holding thousands of modules (an
#: embedding program, a test run) looks at each once and stats its file once, not at every
#: snapshot.
_FILES: dict[str, _Loaded] = {}
_FOUND: tuple[frozenset[int], list[_Loaded]] = (frozenset(), [])


def _stat(file: str, *, folder: bool = False) -> list[int] | None:
    try:
        stat = os.stat(file)
    except OSError:
        return None
    if folder:
        return [stat.st_mtime_ns] if os.path.isdir(file) else None
    return [stat.st_mtime_ns, stat.st_size]


def build(root: Path, files: Mapping[str, str | None], *, names: Sequence[str] | None) -> dict[str, Any]:
    """The snapshot of a result just computed. `files`: the wfops files it read, by name ->
    content hash, taken before it read them (an edit meanwhile then misses); `names`: the
    `listing` taken then, or None for a result no wfops file name decides."""
    return {
        "format": FORMAT,
        "tool": tool_fingerprint(),
        "listing": None if names is None else list(names),
        "files": dict(files),
        "python": python_inputs(root),
        "libraries": loaded_libraries(root),
        "path": import_path(root),
    }


def unchanged(root: Path, snapshot: Any) -> bool:
    """Whether everything `snapshot` recorded is as it was (False for anything unreadable)."""
    try:
        if snapshot["format"] != FORMAT or snapshot["path"] != import_path(root):
            return False
        if snapshot["listing"] is not None and snapshot["listing"] != listing(root):
            return False
        places: dict[str, str | None] = {**snapshot["files"], **snapshot["python"]}
        if any(place_hash(root, rel) != digest for rel, digest in places.items()):
            return False
        libraries: dict[str, Any] = snapshot["libraries"]
        if any(_stat(file) != identity for file, identity in libraries.items()):
            return False
        return bool(snapshot["tool"] == tool_fingerprint())
    except (KeyError, TypeError, AttributeError, ValueError, OSError):
        return False
