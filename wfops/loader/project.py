"""Find a project, load its files into models, and turn schema errors into diagnostics."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.dburl import location_of
from wfops.diagnostics import Diagnostic, error
from wfops.loader.guard import looked_up
from wfops.loader.root import DEPLOYMENTS_DIR, LOCK_FILE, SOURCES_FILE, WORKFLOWS_DIR, find_root
from wfops.model.json_schema import model_of
from wfops.model.objects import PlainModel, from_model
from wfops.model.plain import load as plain_load

if TYPE_CHECKING:
    from pydantic import BaseModel

    from wfops.loader.yaml import Document

__all__ = ["DEPLOYMENTS_DIR", "LOCK_FILE", "SOURCES_FILE", "WORKFLOWS_DIR", "Loaded", "Project", "find_root",
           "load_document", "load_project", "project_db_path", "validate_document", "yaml_files"]

STATE_DIR = ".wfops"


# Plain classes, not dataclasses: a dataclass costs ~1 ms to create at import (its methods are
# compiled from source), and `wfops validate` starts cold on every commit.
class Loaded:
    """One successfully parsed and schema-valid file."""

    def __init__(self, file: str, doc: Document, model: Any) -> None:
        self.file = file  # path relative to the project root, with forward slashes
        self.doc = doc
        self.model = model

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.file!r})"


class Project:
    def __init__(self, root: Path, sources: Loaded | None = None) -> None:
        self.root = root
        self.sources = sources
        self.workflows: dict[str, Loaded] = {}
        self.deployments: dict[str, Loaded] = {}
        self.diagnostics: list[Diagnostic] = []
        # Files that were found but could not be loaded (so later checks do not report them as missing).
        self.broken_files: set[str] = set()

    def __repr__(self) -> str:
        return f"Project({self.root!r})"

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def yaml_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def load_project(root: Path) -> Project:
    """Load sources.yaml, workflows/*.yaml and deployments/*.yaml; problems become diagnostics.

    Each valid file becomes its `wfops.model.objects` object (see `load_document`)."""
    project = Project(root=root.resolve())
    sources_path = project.root / SOURCES_FILE
    if sources_path.exists():
        project.sources = _load(project, sources_path, "sources")
    for path in _listed(project, WORKFLOWS_DIR):
        loaded = _load(project, path, "workflow")
        if loaded is not None:
            register(project, project.workflows, loaded, "workflow", "duplicate-workflow")
    for path in _listed(project, DEPLOYMENTS_DIR):
        loaded = _load(project, path, "deployment")
        if loaded is not None:
            register(project, project.deployments, loaded, "deployment", "duplicate-deployment")
    return project


def _listed(project: Project, name: str) -> list[Path]:
    if (project.root / name).exists() and not (project.root / name).is_dir():
        project.diagnostics.append(error("file-unreadable", f"{name} is a file; wfops reads {name}/*.yaml "
                                         "from a directory of that name", name,
                                         hint=f"move it into a `{name}/` directory"))
        return []
    try:
        return yaml_files(project.root / name)
    except OSError as exc:
        project.diagnostics.append(error("file-unreadable", f"cannot list {name}/: {exc.strerror}", name,
                                         hint="check the directory's permissions"))
        return []


def register(project: Project, table: dict[str, Loaded], loaded: Loaded, what: str, code: str) -> None:
    """Add a loaded workflow or deployment under its name; a name taken already is `code`."""
    name = loaded.model.name
    if name in table:
        subject = {"workflow": name} if what == "workflow" else {"deployment": name}
        project.diagnostics.append(error(
            code, f"{what} name {name!r} is already used by {table[name].file}", loaded.file,
            loaded.doc.at(("name",)), hint=f"give each {what} a unique `name`", **subject))
        return
    table[name] = loaded


def _load(project: Project, path: Path, kind: str) -> Loaded | None:
    # The path as listed (a symlink keeps its own name), relative to the root.
    rel = path.relative_to(project.root).as_posix()
    # deferred: record-hit path, which finds the root and the store but reads no YAML
    from wfops.loader.yaml import YamlLoadError, load_yaml_file

    try:
        refusal = _refuse_path(project, path, rel)
        if refusal is not None:
            raise YamlLoadError(refusal)
        doc = load_yaml_file(path, rel)
    except YamlLoadError as exc:
        project.diagnostics.append(exc.diagnostic)
        project.broken_files.add(exc.diagnostic.file)
        return None
    parsed, diagnostics = load_document(doc, kind)
    project.diagnostics.extend(diagnostics)
    if parsed is None:
        project.broken_files.add(rel)
        return None
    return Loaded(rel, doc, parsed)


def _refuse_path(project: Project, path: Path, rel: str) -> Diagnostic | None:
    """Names that cannot be reported, and symlinks that lead out of the project."""
    shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if shown != rel:
        return error("file-name-encoding", f"the file name {shown!r} is not valid UTF-8", shown,
                     hint="rename the file using UTF-8 characters")
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling link or a loop: the read reports it
        return None
    if not target.is_relative_to(project.root):
        return error("file-outside-project", f"{rel} is a symlink to {target}, outside the project", rel,
                     hint="copy the file into the project; wfops reads only files under the project root")
    return None


def load_document(doc: Document, kind: str) -> tuple[PlainModel | None, list[Diagnostic]]:
    """A workflow, deployment or sources file as its plain object, or the reasons it is invalid.

    The plain loader decides a file it is sure of without pydantic; any other goes to the
    pydantic models, which word every error (and whose result is turned plain)."""
    sure = plain_load(kind, doc.data)
    if sure is not None:
        return sure, []
    parsed, diagnostics = validate_document(doc, model_of(kind))
    return (from_model(parsed) if parsed is not None else None), diagnostics


def validate_document(doc: Document, model: type[BaseModel]) -> tuple[Any, list[Diagnostic]]:
    """Validate loaded data against a pydantic model; each error points at its node."""
    from pydantic import ValidationError  # deferred: pydantic (~30 ms), see load_project

    # deferred: record-hit path (its messages are built only when a document is invalid)
    from wfops.loader.schema_errors import schema_diagnostics

    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        return None, schema_diagnostics(doc, exc)


def project_db_path(root: Path, explicit: str | Path | None = None) -> Path | str:
    """--db wins, then WFOPS_DB, then .wfops/wfops.db under the root. A PostgreSQL URL
    stays text (a `Path` would fold its `//`); anything else is a SQLite file path."""
    if explicit:
        return _store_path(location_of(explicit) if isinstance(explicit, str) else explicit, "--db")
    env = os.environ.get("WFOPS_DB")
    if env:
        return _store_path(location_of(env), "WFOPS_DB")
    return root / STATE_DIR / "wfops.db"


def _store_path(location: Path | str, what: str) -> Path | str:
    """A SQLite store's path through the path guard's look-up (a URL is the server's to judge)."""
    return looked_up(location, what=what, argument="db") if isinstance(location, Path) else location
