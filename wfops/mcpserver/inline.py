"""Validate YAML text given inline (not yet saved) in the context of the project.

The text goes through the same loader and model validation as a file, then takes
the place of the file it is meant for (`path`, or the workflow/deployment of the
same name) in an otherwise normal load of the project, so the static checks see
it exactly as `wfops validate` would after saving it. Nothing is written to disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from wfops.diagnostics import Diagnostic, sort_key

if TYPE_CHECKING:
    from wfops.loader.project import Loaded, Project

Kind = Literal["workflow", "deployment", "sources"]
KINDS: tuple[Kind, ...] = ("workflow", "deployment", "sources")


@dataclass
class InlineReport:
    file: str
    diagnostics: list[Diagnostic]
    static_checks: bool
    deployments: list[str]


def validate_text(root: Path, text: str, kind: Kind, path: str | None = None) -> InlineReport:
    from wfops.compiler.validate import validate_loaded
    from wfops.loader.project import Loaded, load_project, validate_document
    from wfops.loader.yaml import YamlLoadError, load_yaml_text

    display = path or {"sources": "sources.yaml"}.get(kind, f"<inline {kind}>")
    try:
        doc = load_yaml_text(text, display)
    except YamlLoadError as exc:
        return InlineReport(display, [exc.diagnostic], False, [])
    model, found = validate_document(doc, _model(kind))
    if model is None:
        return InlineReport(display, found, False, [])
    project = load_project(root)
    _substitute(project, Loaded(display, doc, model), kind)
    diagnostics = validate_loaded(project).diagnostics
    mine = sorted(dict.fromkeys(d for d in diagnostics if d.file == display), key=sort_key)
    return InlineReport(display, mine, True, sorted(project.deployments))


def _model(kind: Kind) -> type:
    from wfops.model.deployment import Deployment
    from wfops.model.sources import SourcesFile
    from wfops.model.workflow import Workflow

    return {"workflow": Workflow, "deployment": Deployment, "sources": SourcesFile}[kind]


def _substitute(project: Project, loaded: Loaded, kind: Kind) -> None:
    """Put the inline file where the file it stands for was (same path, else same name)."""
    project.broken_files.discard(loaded.file)
    project.diagnostics = [d for d in project.diagnostics if d.file != loaded.file]
    if kind == "sources":
        project.sources = loaded
        return
    table = project.workflows if kind == "workflow" else project.deployments
    for name, other in list(table.items()):
        if other.file == loaded.file:
            del table[name]
    table[loaded.model.name] = loaded
