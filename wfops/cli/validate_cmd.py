"""`wfops validate [PATHS...] [--format F]`: syntax, schema and static checks.

The whole project is always loaded (references cross files); PATHS only choose
which findings are reported. A path outside any project is checked on its own.
Exit 0 when there are no errors (warnings allowed), 1 when there are.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from wfops.diagnostics import Diagnostic, error, has_errors
from wfops.errors import ProjectNotFound, UsageError

PROJECT_FILES = ("sources.yaml", "wfops.lock")


@dataclass
class Selection:
    """Which project findings to report, and which files to check on their own."""

    everything: bool = False
    files: set[str] = field(default_factory=set)
    folders: list[str] = field(default_factory=list)
    standalone: list[tuple[Path, str, bool]] = field(default_factory=list)  # (path, shown, quiet if unknown)
    missing: list[Diagnostic] = field(default_factory=list)

    def wants(self, d: Diagnostic) -> bool:
        return self.everything or d.file in self.files or any(d.file.startswith(f) for f in self.folders)


def run(*, paths: list[str], format: str, project: str | None) -> int:
    from wfops.report import FORMATS, render

    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}", hint="use one of: " + ", ".join(FORMATS))
    root = _find_root(project, paths)
    selection = select(root, paths)
    found: list[Diagnostic] = list(selection.missing)
    if root is not None and (selection.everything or selection.files or selection.folders):
        found += [d for d in project_diagnostics(root) if selection.wants(d)]
    for path, shown, quiet in selection.standalone:
        from wfops.compiler.standalone import validate_file

        found += validate_file(path, shown, quiet_unknown=quiet)
    render(found, format, sys.stdout, root)
    return 1 if has_errors(found) else 0


def project_diagnostics(root: Path) -> list[Diagnostic]:
    """The whole project's findings, replayed from the cache when no input changed."""
    from wfops.compiler import cache

    key = cache.cache_key(root)
    cached = cache.lookup(root, key)
    if cached is not None:
        return cached
    from wfops.compiler.validate import validate_project

    diagnostics = validate_project(root).diagnostics
    cache.store(root, key, diagnostics)
    return diagnostics


def _find_root(explicit: str | None, paths: list[str]) -> Path | None:
    from wfops.loader.project import find_root

    if explicit is not None or not paths:
        return find_root(explicit=explicit)  # no project and no paths: ProjectNotFound, exit 2
    try:
        return find_root()
    except ProjectNotFound:
        pass
    for raw in paths:
        start = Path(raw).resolve()
        try:
            return find_root(start if start.is_dir() else start.parent)
        except ProjectNotFound:
            continue
    return None


def select(root: Path | None, paths: list[str]) -> Selection:
    selection = Selection(everything=not paths)
    for raw in paths:
        path = Path(raw)
        resolved = path.resolve()
        if not resolved.exists():
            selection.missing.append(error("file-missing", f"{raw} does not exist", raw,
                                           hint="check the path"))
            continue
        rel = _relative(root, resolved)
        if rel is None:
            if resolved.is_dir():
                selection.standalone += [(p, str(p), False) for p in sorted(resolved.rglob("*.y*ml"))]
            else:
                selection.standalone.append((resolved, raw, False))
        elif resolved.is_dir():
            if rel == "":
                selection.everything = True
            else:
                selection.folders.append(rel + "/")
        elif _is_project_file(rel):
            selection.files.add(rel)
        elif rel.endswith(".py"):
            selection.files.update({rel, "sources.yaml"})  # python sources are reported at their declaration
        elif resolved.suffix in (".yaml", ".yml"):
            selection.standalone.append((resolved, rel, True))  # e.g. CI config: checked only if it is ours
    return selection


def _relative(root: Path | None, path: Path) -> str | None:
    if root is None or not path.is_relative_to(root):
        return None
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def _is_project_file(rel: str) -> bool:
    if rel in PROJECT_FILES:
        return True
    folder, _, name = rel.partition("/")
    return folder in ("workflows", "deployments") and "/" not in name and name.endswith((".yaml", ".yml"))
