"""Validate one file (or YAML text) without a project around it.

Its kind is guessed from where it stands (`workflows/`, `deployments/`,
`sources.yaml`) or else from its top-level keys. A workflow gets every check
that needs no other file; `std` capabilities are checked, other sources and
subworkflows are not known here and are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wfops.compiler.checks.context import IDENTITY, Catalog, CheckContext, Sink
from wfops.compiler.checks.run import env_checks, file_checks
from wfops.diagnostics import Diagnostic, error, sort_key
from wfops.errors import UsageError
from wfops.loader.project import Loaded, Project, load_document
from wfops.loader.yaml import YamlLoadError, load_yaml_file, load_yaml_text
from wfops.sources.std import StdSource

KINDS = ("workflow", "deployment", "sources")


def guess_kind(path: Path | None, data: Any) -> str | None:
    """By location first (when a path is given), then by top-level keys."""
    if path is not None:
        if path.name in ("sources.yaml", "sources.yml"):
            return "sources"
        if path.parent.name in ("workflows", "deployments"):
            return path.parent.name[:-1]
    if isinstance(data, dict):
        if "steps" in data:
            return "workflow"
        if "sources" in data:
            return "sources"
        if "workflow" in data and "name" in data:
            return "deployment"
    return None


def validate_file(path: Path, display: str, kind: str | None = None, *, quiet_unknown: bool = False
                  ) -> list[Diagnostic]:
    """Findings for one file; with `quiet_unknown`, a file that is no wfops file yields none."""
    try:
        doc = load_yaml_file(path, display)
    except YamlLoadError as exc:
        return [] if quiet_unknown else [exc.diagnostic]
    # Inside a project only the keys count: `.github/workflows/ci.yml` is not a wfops workflow.
    kind = kind or guess_kind(None if quiet_unknown else path, doc.data)
    if kind is None:
        if quiet_unknown:
            return []
        return [error("unknown-kind", f"{display} is not recognizably a workflow, deployment or sources file",
                      display, hint="put it under workflows/ or deployments/, name it sources.yaml, or give "
                      "it the keys of its kind (a workflow has `steps:`)")]
    return _check_document(doc, kind)


def validate_text(text: str, kind: str, file: str = "<text>") -> list[Diagnostic]:
    """Findings for YAML text of a known kind (for editors and the MCP server)."""
    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}", hint="use one of: " + ", ".join(KINDS))
    try:
        doc = load_yaml_text(text, file)
    except YamlLoadError as exc:
        return [exc.diagnostic]
    return _check_document(doc, kind)


def _check_document(doc: Any, kind: str) -> list[Diagnostic]:
    parsed, found = load_document(doc, kind)
    if parsed is None or kind != "workflow":
        return sorted(found, key=sort_key)
    loaded = Loaded(doc.file, doc, parsed)
    sink = Sink()
    file_checks(loaded, sink, {})
    catalog = Catalog(caps={"std": dict(StdSource().capabilities())}, kinds={"std": "std"}, sources_known=False)
    env_checks(CheckContext(Project(root=Path(".")), catalog, sink), IDENTITY, loaded)
    return sorted(dict.fromkeys([*found, *sink.found]), key=sort_key)
