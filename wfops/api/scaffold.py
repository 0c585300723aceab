"""`init`: scaffold a project that validates, compiles, checks and runs as it is; `schema`.

Templates live in `wfops/scaffold/project/` (package data). A path part starting
with `dot-` becomes a dot file (`dot-gitignore` -> `.gitignore`) and a `.tmpl`
suffix is dropped: so packaging never skips hidden files and the template python
is never imported or linted as wfops code. The editor schemas are written to
`.wfops-schemas/` and committed with the project, so yaml-language-server resolves
the `# yaml-language-server: $schema=...` line of every file offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from wfops.atomic import write_atomic
from wfops.errors import UsageError, WfopsError
from wfops.model.json_schema import KINDS, committed_path, schema_text

SCHEMA_DIR = ".wfops-schemas"
SCHEMA_KINDS = ("workflow", "deployment", "sources", "wftest")


@dataclass(frozen=True)
class Scaffold:
    directory: Path
    written: list[str]      # project-relative files, sorted
    in_git: bool            # the directory is inside a git repository already


def schema(kind: str = "workflow") -> str:
    """The JSON Schema of a file kind (workflow, deployment or sources), as editors read it."""

    if kind not in KINDS:
        raise UsageError(f"unknown schema kind {kind!r}", hint="use --kind " + ", --kind ".join(KINDS))
    return schema_text(kind)


def init(directory: str | Path = ".", *, force: bool = False) -> Scaffold:
    """Write a working project into `directory`; UsageError where it would overwrite (unless `force`)."""
    if not str(directory).strip():
        raise UsageError("the project directory is empty", hint="give a directory, or `.` for this one")
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{directory} exists and is not a directory")
    files = scaffold_files()
    gitignore = files.pop(".gitignore")
    conflicts = [rel for rel in files if (target / rel).exists()]
    if conflicts and not force:
        more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
        raise UsageError(f"{target / conflicts[0]} already exists{more}; nothing was written",
                         hint="pass --force to overwrite the scaffold's files")
    try:
        for rel, text in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        _merge_gitignore(target / ".gitignore", gitignore)
    except OSError as exc:  # a read-only place, a file where a folder should be, a full disk
        where = exc.filename or target
        raise WfopsError(f"cannot write the project in {directory}: {where}: {exc.strerror or exc}",
                         hint="choose a directory you can write to") from None
    here = target.resolve()
    in_git = any((folder / ".git").exists() for folder in (here, *here.parents))
    return Scaffold(target, sorted([*files, ".gitignore"]), in_git)


def scaffold_files() -> dict[str, str]:
    """Project-relative path -> text of every file `init` writes."""

    root = resources.files("wfops") / "scaffold" / "project"
    found = dict(_walk(root, ()))
    for kind in SCHEMA_KINDS:
        # The committed copies: generated from the models and guarded by a test to match.
        found[f"{SCHEMA_DIR}/{kind}.schema.json"] = committed_path(kind).read_text(encoding="utf-8")
    return found


def _walk(node: Traversable, parts: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        name = "." + child.name[4:] if child.name.startswith("dot-") else child.name
        if child.is_dir():
            yield from _walk(child, (*parts, name))
        else:
            yield "/".join((*parts, name.removesuffix(".tmpl"))), child.read_text(encoding="utf-8")


def _merge_gitignore(path: Path, template: str) -> None:
    """Add what wfops needs ignored to an existing .gitignore instead of refusing or replacing it."""
    if not path.exists():
        write_atomic(path, template)
        return
    current = path.read_text(encoding="utf-8")
    wanted = [line for line in template.splitlines() if line and not line.startswith("#")]
    missing = [line for line in wanted if line not in current.splitlines()]
    if missing:
        sep = "" if current.endswith("\n") or not current else "\n"
        write_atomic(path, current + sep + "\n".join(missing) + "\n")
