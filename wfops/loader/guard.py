"""The one guard for every path a user or an agent names: it must lie inside the project.

Symlinks are resolved before the test, so neither `..`, an absolute path nor a link
leads out of the project root; a NUL byte is refused before the filesystem sees it.
"""

from __future__ import annotations

from pathlib import Path

from wfops.errors import UsageError


def inside_project(root: Path, raw: str | Path, *, base: Path | None = None, what: str = "path") -> Path:
    """`raw` resolved (relative to `base`, default the root); UsageError when it leads outside `root`."""
    text = str(raw)
    if "\0" in text:
        raise UsageError(f"{what} {text!r} contains a NUL byte", hint="give a file or folder path")
    project = root.resolve()
    try:
        resolved = ((base or project) / text).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise UsageError(f"{what} {text}: cannot be resolved ({exc})") from None
    if not resolved.is_relative_to(project):
        raise UsageError(f"{what} {text} is outside the project ({project})",
                         hint="wfops reads only files under the project root; give a path inside it")
    return resolved


def relative_name(root: Path, path: Path) -> str:
    """`path` (resolved, inside `root`) as a project-relative posix name; "" for the root itself."""
    rel = path.relative_to(root.resolve()).as_posix()
    return "" if rel == "." else rel
