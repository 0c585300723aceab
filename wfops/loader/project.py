"""Find a project, load its files into models, and turn schema errors into diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wfops.diagnostics import Diagnostic, error
from wfops.errors import ProjectNotFound
from wfops.loader.yaml import Document, YamlLoadError, load_yaml_file

SOURCES_FILE = "sources.yaml"
LOCK_FILE = "wfops.lock"
WORKFLOWS_DIR = "workflows"
DEPLOYMENTS_DIR = "deployments"
STATE_DIR = ".wfops"


def find_root(start: Path | None = None, explicit: Path | str | None = None) -> Path:
    """The nearest directory upward holding sources.yaml or wfops.lock; `explicit` (--project) wins."""
    if explicit is not None:
        root = Path(explicit).resolve()
        if not root.is_dir():
            raise ProjectNotFound(f"--project {explicit}: no such directory")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / SOURCES_FILE).is_file() or (candidate / LOCK_FILE).is_file():
            return candidate
    raise ProjectNotFound(
        f"no wfops project here: no {SOURCES_FILE} or {LOCK_FILE} in {here} or above",
        hint="run `wfops init` to create one, or pass --project DIR")


@dataclass
class Loaded:
    """One successfully parsed and schema-valid file."""

    file: str  # path relative to the project root, with forward slashes
    doc: Document
    model: Any


@dataclass
class Project:
    root: Path
    sources: Loaded | None = None
    workflows: dict[str, Loaded] = field(default_factory=dict)
    deployments: dict[str, Loaded] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Files that were found but could not be loaded (so later checks do not report them as missing).
    broken_files: set[str] = field(default_factory=set)

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
    """Load sources.yaml, workflows/*.yaml and deployments/*.yaml; problems become diagnostics."""
    from wfops.model.deployment import Deployment
    from wfops.model.sources import SourcesFile
    from wfops.model.workflow import Workflow

    project = Project(root=root.resolve())
    sources_path = project.root / SOURCES_FILE
    if sources_path.exists():
        project.sources = _load(project, sources_path, SourcesFile)
    for path in yaml_files(project.root / WORKFLOWS_DIR):
        loaded = _load(project, path, Workflow)
        if loaded is not None:
            _register(project, project.workflows, loaded, "workflow", "duplicate-workflow")
    for path in yaml_files(project.root / DEPLOYMENTS_DIR):
        loaded = _load(project, path, Deployment)
        if loaded is not None:
            _register(project, project.deployments, loaded, "deployment", "duplicate-deployment")
    return project


def _register(project: Project, table: dict[str, Loaded], loaded: Loaded, what: str, code: str) -> None:
    name = loaded.model.name
    if name in table:
        project.diagnostics.append(error(
            code, f"{what} name {name!r} is already used by {table[name].file}", loaded.file,
            loaded.doc.at(("name",)), hint=f"give each {what} a unique `name`"))
        return
    table[name] = loaded


def _load(project: Project, path: Path, model: type) -> Loaded | None:
    rel = project.rel(path)
    try:
        doc = load_yaml_file(path, rel)
    except YamlLoadError as exc:
        project.diagnostics.append(exc.diagnostic)
        project.broken_files.add(rel)
        return None
    parsed, diagnostics = validate_document(doc, model)
    project.diagnostics.extend(diagnostics)
    if parsed is None:
        project.broken_files.add(rel)
        return None
    return Loaded(rel, doc, parsed)


def validate_document(doc: Document, model: type) -> tuple[Any, list[Diagnostic]]:
    """Validate loaded data against a pydantic model; each error points at its node."""
    from pydantic import ValidationError

    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        return None, schema_diagnostics(doc, exc)


# pydantic inserts the union tag (e.g. the step kind) into `loc`; these are not keys of the document.
_TAGS = {"uses", "workflow", "if", "foreach", "interrupt", "end", "python", "mcp", "function-after",
         "function-before", "function-wrap", "str", "list[str]", "dict[str,str]"}


def schema_diagnostics(doc: Document, exc: Any) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    seen: set[tuple] = set()
    for err in exc.errors(include_url=False):
        path = _document_path(doc.data, err["loc"])
        kind = err["type"]
        code, message, hint = _describe(kind, path, err)
        at_key = kind == "extra_forbidden"
        position = doc.at(path, key=at_key)
        key = (code, position, message)
        if key in seen:
            continue
        seen.add(key)
        found.append(error(code, message, doc.file, position, hint))
    return found


def _document_path(data: Any, loc: tuple) -> tuple:
    """Keep only the parts of pydantic's `loc` that really are keys or indexes of the data."""
    path: list[Any] = []
    node = data
    loc = _strip_union_tags(loc)
    for part in loc:
        if isinstance(node, dict) and part in node or isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(part, str) and (part in _TAGS or "[" in part):
            continue
        elif isinstance(node, dict) and part not in node and isinstance(part, str) and "." not in part:
            path.append(part)  # a missing required key: points at the parent mapping
            node = None
        else:
            continue
    return tuple(path)


_STEP_TAGS = {"uses", "workflow", "if", "foreach", "interrupt", "end"}


def _strip_union_tags(loc: tuple) -> tuple:
    """Drop the discriminator tags pydantic puts after a step index or a source id."""
    kept: list[Any] = []
    for index, part in enumerate(loc):
        if index >= 2 and loc[index - 2] == "steps" and isinstance(loc[index - 1], int) and part in _STEP_TAGS:
            continue
        if index >= 2 and loc[index - 2] == "sources" and part in ("python", "mcp"):
            continue
        kept.append(part)
    return tuple(kept)


def _describe(kind: str, path: tuple, err: dict) -> tuple[str, str, str]:
    where = ".".join(str(p) for p in path) or "the file"
    field_name = str(path[-1]) if path else ""
    if kind == "missing":
        return ("missing-key", f"`{field_name}` is required in {'.'.join(map(str, path[:-1])) or 'the file'}",
                f"add `{field_name}:`")
    if kind == "extra_forbidden":
        return ("unknown-key", f"unknown key `{field_name}` in {'.'.join(map(str, path[:-1])) or 'the file'}",
                "remove it or fix its spelling; `wfops schema` lists every allowed key")
    if kind == "step-kind":
        return ("unknown-step-kind", f"step {where} has no kind: {err['msg']}",
                "add `uses:` for a capability call, or `end:` to finish the workflow")
    if kind == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern", "")
        return ("invalid-value", f"{where}: {err['input']!r} does not match the required form {pattern}",
                _pattern_hint(field_name))
    if kind == "literal_error" or kind == "enum":
        expected = (err.get("ctx") or {}).get("expected", "")
        return ("invalid-value", f"{where}: {err['input']!r} is not allowed; expected {expected}",
                f"use one of {expected}")
    if kind == "value_error":
        message = err["msg"].removeprefix("Value error, ")
        return ("invalid-value", f"{where}: {message}", "see the message for the allowed form")
    if kind == "union_tag_invalid":
        expected = (err.get("ctx") or {}).get("expected_tags", "")
        return ("invalid-value", f"{where}: unknown kind {err['input'] if not isinstance(err['input'], dict) else ''}"
                f"; expected one of {expected}", f"use one of {expected}")
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return ("wrong-type", f"{where}: {err['msg'].lower()}, got {_type_name(err['input'])}",
                "change the value to the expected type")
    return ("invalid-value", f"{where}: {err['msg']}", "fix the value; `wfops schema` shows the format")


def _pattern_hint(field_name: str) -> str:
    return {
        "name": "use lowercase letters, digits, `_`, `.` and `-`, starting with a letter or digit",
        "id": "use letters, digits, `_` and `-`, starting with a letter or `_`",
        "uses": "write `<source>.<capability>`, e.g. `std.echo`",
        "workflow": "write a workflow name, or `name@sha256:<hex prefix>` to pin",
        "foreach": "iterate a path such as `$state.items`",
    }.get(field_name, "write a `state.<field>` path" if field_name in ("save", "errors")
          else "fix the value to match the expected form")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def project_db_path(root: Path, explicit: str | Path | None = None) -> Path:
    """--db wins, then WFOPS_DB, then .wfops/wfops.db under the root."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("WFOPS_DB")
    if env:
        return Path(env)
    return root / STATE_DIR / "wfops.db"
