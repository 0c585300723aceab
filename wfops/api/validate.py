"""`validate`: the whole project's findings (cached), the selection of what to report, inline text.

The whole project is always checked (references cross files); `paths` only choose
which findings are reported. Every path goes through the one project path guard.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from wfops.diagnostics import Diagnostic, error, has_errors, sort_key
from wfops.errors import UsageError
from wfops.fastpath import cache
from wfops.fastpath.replay import REPLAYED
from wfops.fastpath.snapshot import project_files
from wfops.loader.guard import inside_project, relative_name
from wfops.loader.project import (
    DEPLOYMENTS_DIR,
    LOCK_FILE,
    SOURCES_FILE,
    WORKFLOWS_DIR,
    Loaded,
    Project,
    load_document,
    load_project,
    register,
)
from wfops.loader.testfiles import project_test_files
from wfops.model.objects import Deployment, Workflow
from wfops.report import render

if TYPE_CHECKING:
    from wfops.fastpath.contracts import ContractFile
    from wfops.sources.base import Capability

Kind = Literal["workflow", "deployment", "sources", "wftest"]
KINDS: tuple[Kind, ...] = ("workflow", "deployment", "sources", "wftest")


class Selection:
    """Which project findings to report, and which files to check on their own."""

    # A plain class, not a dataclass: creating one costs ~1 ms at import (`validate` starts cold).
    def __init__(self, *, everything: bool = False) -> None:
        self.everything = everything
        self.files: set[str] = set()
        self.folders: list[str] = []
        self.other_yaml: list[tuple[Path, str]] = []  # checked only if they are wfops files
        self.missing: list[Diagnostic] = []

    def wants(self, d: Diagnostic, deployments: dict[str, str]) -> bool:
        """`deployments`: file -> name. A deployment's file also selects what its bindings
        break in the workflows it runs (findings that name it as their deployment)."""
        if self.everything or d.file in self.files or any(d.file.startswith(f) for f in self.folders):
            return True
        if d.deployment is None:
            return False
        chosen = {name for file, name in deployments.items()
                  if file in self.files or any(file.startswith(f) for f in self.folders)}
        return bool(chosen & set(d.deployment.split(", ")))

    @property
    def reads_project(self) -> bool:
        return self.everything or bool(self.files or self.folders)


def select(root: Path, paths: list[str], base: Path | None) -> Selection:
    """What `paths` (relative to `base`, default the root) ask to report on; a path outside the
    project is a UsageError, a path that does not exist a `file-missing` finding."""
    selection = Selection(everything=not paths)
    for raw in paths:
        resolved = inside_project(root, raw, base=base, argument="paths")
        if not resolved.exists():
            selection.missing.append(error("file-missing", f"{raw} does not exist", raw, hint="check the path"))
            continue
        rel = relative_name(root, resolved)
        if resolved.is_dir():
            if rel == "":
                selection.everything = True
            else:
                selection.folders.append(rel + "/")
        elif _is_project_file(rel) or rel.endswith((".wftest.yaml", ".wftest.yml")):
            selection.files.add(rel)
        elif rel.endswith(".py"):
            selection.files.update({rel, SOURCES_FILE})  # python sources are reported at their declaration
        elif resolved.suffix in (".yaml", ".yml"):
            selection.other_yaml.append((resolved, rel))  # e.g. CI config: reported only if it is ours
    return selection


def _is_project_file(rel: str) -> bool:
    if rel in (SOURCES_FILE, LOCK_FILE):
        return True
    folder, _, name = rel.partition("/")
    return folder in (WORKFLOWS_DIR, DEPLOYMENTS_DIR) and "/" not in name and name.endswith((".yaml", ".yml"))


def project_diagnostics(root: Path) -> tuple[list[Diagnostic], dict[str, str]]:
    """The whole project's findings and its deployment file -> name table, replayed from the
    cache when no input changed."""
    cached = cache.lookup(root)
    if cached is not None:
        return cached
    # deferred: the checks (ruamel, pydantic for test files) only on a miss, not on a cache hit
    from wfops.compiler.validate import validate_project

    files = project_files(root)  # before the checks read them: an edit meanwhile misses next time
    # Only validate serves python contracts from a record: compile, check, run and test need
    # the modules imported, or must see drift.
    validation = validate_project(root, contracts=_Contracts(root))
    diagnostics = sorted([*validation.diagnostics, *_test_findings(validation.project)], key=sort_key)
    deployments = {loaded.file: name for name, loaded in validation.project.deployments.items()}
    cache.store(root, files, diagnostics, deployments, replay=_rendered(diagnostics))
    return diagnostics, deployments


class _Contracts:
    """The python sources' contract record (`wfops.fastpath.contracts.ContractFile`), loaded only
    when the project declares a python source: it reads contracts with the lock's reader, whose
    dataclasses cost a cold `validate` ~5 ms to create."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def recorded(self, modules: Mapping[str, str]) -> dict[str, dict[str, Capability]] | None:
        return self._file().recorded(modules)

    def record(self, modules: Mapping[str, str], contracts: Mapping[str, Mapping[str, Capability]] | None) -> None:
        self._file().record(modules, contracts)

    def _file(self) -> ContractFile:
        # deferred: the record and the lock's reader only for a project with python sources
        from wfops.fastpath.contracts import ContractFile

        return ContractFile(self.root)


def _test_findings(project: Project) -> list[Diagnostic]:
    """The findings of the project's test files; none to check loads none of their checks."""
    if not project_test_files(project.root):
        return []
    # deferred: the test-file checks (a dataclass, the test loader) only for a project with tests
    from wfops.compiler.checks.wftests import test_file_findings

    return test_file_findings(project)


def _rendered(diagnostics: list[Diagnostic]) -> dict[str, Any]:
    """The whole project's report as `validate` prints it in each replayed format, for a cache
    hit to print without building a finding (`wfops.fastpath.replay`)."""
    replay: dict[str, Any] = {"ok": not has_errors(diagnostics)}
    for fmt in REPLAYED:
        out = io.StringIO()
        render(diagnostics, fmt, out)
        replay[fmt] = out.getvalue()
    return replay


def validate_paths(root: Path, paths: list[str], base: Path | None) -> list[Diagnostic]:
    selection = select(root, paths, base)
    found = list(selection.missing)
    if selection.reads_project:
        diagnostics, deployments = project_diagnostics(root)
        found += [d for d in diagnostics if selection.wants(d, deployments)]
    if selection.other_yaml:
        # deferred: wfops.compiler.standalone is not needed on the validate cache-hit path (pre-commit)
        from wfops.compiler.standalone import validate_file

        for path, rel in selection.other_yaml:
            found += validate_file(path, rel, quiet_unknown=True)
    return sorted(found, key=sort_key)


def validate_standalone(paths: list[str]) -> list[Diagnostic]:
    """Files outside any project, each checked on its own (its kind guessed from its place or keys)."""
    # deferred: wfops.compiler.standalone is not needed on the validate cache-hit path (pre-commit)
    from wfops.compiler.standalone import validate_file

    found: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if "\0" in raw:
            raise UsageError(f"path {raw!r} contains a NUL byte", hint="give a file or folder path")
        if not path.exists():
            found.append(error("file-missing", f"{raw} does not exist", raw, hint="check the path"))
        elif path.is_dir():
            found += [d for p in sorted(path.rglob("*.y*ml")) for d in validate_file(p, str(p))]
        else:
            found += validate_file(path, raw)
    return sorted(found, key=sort_key)


def validate_inline(root: Path, text: str, kind: Kind, path: str | None) -> tuple[str, list[Diagnostic], bool]:
    """YAML text not yet saved, checked as if it replaced the project file it is meant for
    (`path`, else the workflow or deployment of the same name). Nothing is written.
    Returns (the name it was checked as, its findings, whether the static checks ran)."""
    display, found, static = validate_overlay(root, text, kind, path)
    return display, [d for d in found if d.file == display], static


def validate_overlay(root: Path, text: str, kind: Kind, path: str | None) -> tuple[str, list[Diagnostic], bool]:
    """The WHOLE project's findings as they would be with `text` in place of its file (`path`, else
    the workflow or deployment of the same name): a workflow edit can break a deployment's
    bindings or a test. Nothing is written. Returns (the text's file name, every finding, whether
    the static checks ran: not when the text itself does not parse or fit its schema)."""
    # deferred: wfops.compiler.validate is not needed on the validate cache-hit path (pre-commit)
    from wfops.compiler.checks.wftests import test_file_findings
    from wfops.compiler.validate import validate_loaded
    from wfops.loader.yaml import YamlLoadError, load_yaml_text

    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}", hint="kind is one of: " + ", ".join(KINDS))
    display = relative_name(root, inside_project(root, path, what="path")) if path else \
        (SOURCES_FILE if kind == "sources" else f"<inline {kind}>")
    if kind == "wftest":
        return _test_overlay(root, text, display)
    try:
        doc = load_yaml_text(text, display)
    except YamlLoadError as exc:
        return display, _others(root, display) + [exc.diagnostic], False
    model, found = load_document(doc, kind)
    if model is None:
        return display, sorted(_others(root, display) + found, key=sort_key), False
    project = load_project(root)
    loaded = Loaded(display, doc, model)
    project.broken_files.discard(display)
    project.diagnostics = [d for d in project.diagnostics if d.file != display]
    if kind == "sources":
        project.sources = loaded
    else:
        table = project.workflows if kind == "workflow" else project.deployments
        assert isinstance(model, Workflow | Deployment)
        for name, other in list(table.items()):
            if other.file == display:
                del table[name]
        if display.startswith("<") and model.name in table:
            table[model.name] = loaded  # unsaved text for the file of the same name: it replaces it
        else:
            register(project, table, loaded, kind, f"duplicate-{kind}")
    everything = [*validate_loaded(project).diagnostics, *test_file_findings(project)]
    return display, sorted(dict.fromkeys(everything), key=sort_key), True


def _test_overlay(root: Path, text: str, display: str) -> tuple[str, list[Diagnostic], bool]:
    """A workflow test file's text checked as `wfops validate` checks the file (its schema, then
    the workflow, steps and capabilities it names), with the project's other findings."""
    # deferred: test files are checked only when there is one (or its text)
    from wfops.compiler.checks.wftests import check_test_files
    from wfops.loader.project import validate_document
    from wfops.loader.yaml import YamlLoadError, load_yaml_text
    from wfops.model.wftest import TestFile

    others = _others(root, display)
    try:
        doc = load_yaml_text(text, display)
    except YamlLoadError as exc:
        return display, others + [exc.diagnostic], False
    parsed, found = validate_document(doc, TestFile)
    if parsed is None:
        return display, sorted(others + found, key=sort_key), False
    found += check_test_files(load_project(root), [Loaded(display, doc, parsed)])
    return display, sorted(dict.fromkeys(others + found), key=sort_key), True


def _others(root: Path, display: str) -> list[Diagnostic]:
    """The project's findings about every file but `display` (whose text does not load)."""
    return [d for d in project_diagnostics(root)[0] if d.file != display]
