"""Authoring a project through the API: list it, read its files, write or patch them only
after validating the project as it would be, and scaffold a workflow around a capability.

Every path goes through the one project path guard (nothing outside the root, no symlink
out). Only the project's own files are read: its YAML files and python sources (never
`.git/` or `.wfops/`). Only a workflow, a deployment or sources.yaml is written, and never
before the whole project has been validated with the new text in its place (an overlay:
nothing touches the disk until the text is accepted).
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any, Literal

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from wfops.api.approvals import ClientWrites
from wfops.api.jsonpatch import apply_patch
from wfops.api.validate import Kind, project_diagnostics, validate_overlay
from wfops.atomic import write_atomic
from wfops.compiler.artifact import ArtifactSet
from wfops.diagnostics import Diagnostic
from wfops.errors import UsageError, WfopsError
from wfops.loader.guard import inside_project, relative_name
from wfops.loader.project import (
    DEPLOYMENTS_DIR,
    LOCK_FILE,
    SOURCES_FILE,
    WORKFLOWS_DIR,
    load_project,
)
from wfops.loader.testfiles import TESTS_DIR
from wfops.lockfile import read_lock
from wfops.model.workflow import NAME_PATTERN
from wfops.runner.sources import used_refs

FileKind = Literal["workflow", "deployment", "sources", "test", "python", "lock", "yaml"]
#: Folders never read or listed: wfops's own state, git's, and environments a project may hold.
HIDDEN = {".git", ".wfops", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache",
          ".ruff_cache", ".pytest_cache"}
MAX_LISTED_FILES = 2000
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class WorkflowEntry:
    name: str
    file: str
    description: str | None
    input_schema: dict[str, Any] | None
    deployments: list[str]          # the deployments that run it


@dataclass(frozen=True)
class DeploymentEntry:
    name: str
    file: str
    workflow: str
    bindings: dict[str, str]
    schedule: list[dict[str, Any]] = field(default_factory=list)  # its `schedule:` entries, defaults filled
    # The capabilities its workflows call that their source annotates destructive (as
    # wfops.lock recorded them): running it acts for real (deletes, sends, ...).
    destructive: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SourceEntry:
    id: str
    kind: str
    file: str
    detail: str                     # the module, command or URL


@dataclass(frozen=True)
class ProjectListing:
    root: str
    workflows: list[WorkflowEntry]
    deployments: list[DeploymentEntry]
    sources: list[SourceEntry]
    files: dict[str, list[str]]    # kind -> project-relative files wfops reads
    broken: list[str]              # files that exist but do not load (validate says why)


@dataclass(frozen=True)
class FileText:
    path: str
    kind: FileKind
    text: str                      # the lines asked for (all by default)
    start_line: int
    end_line: int
    total_lines: int


@dataclass(frozen=True)
class WriteReport:
    """A write or patch: whether the text was written, and the project's findings with it."""

    path: str
    kind: Kind
    written: bool
    created: bool                           # the file did not exist before
    forced: bool                            # written although it adds errors
    diagnostics: list[Diagnostic]           # the whole project's findings with the new text
    added: list[Diagnostic]                 # errors the new text adds (why a write was refused)
    text: str                               # the text written (or refused)
    unchanged: bool = False                 # the text equals the file's: nothing to write
    static_checks: bool = True
    #: sources an MCP client wrote that wait for a person's approval (wfops.api.approvals)
    awaiting_approval: list[str] = field(default_factory=list)
    diff: str = ""                          # unified diff of the file as it was against the text

    @property
    def ok(self) -> bool:
        return not self.added


@dataclass(frozen=True)
class Skeleton:
    name: str
    path: str
    text: str
    capability: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    written: WriteReport | None = None


# -- paths --------------------------------------------------------------------------------------

def file_kind(rel: str) -> FileKind | None:
    """What a project-relative file is to wfops; None for files it does not read."""
    parts = rel.split("/")
    if any(part in HIDDEN for part in parts[:-1]) or not rel:
        return None
    if rel == SOURCES_FILE:
        return "sources"
    if rel == LOCK_FILE:
        return "lock"
    if rel.endswith(".py"):
        return "python"
    if not rel.endswith(YAML_SUFFIXES):
        return None
    if rel.endswith((".wftest.yaml", ".wftest.yml")):
        return "test"
    if len(parts) == 2 and parts[0] == WORKFLOWS_DIR:
        return "workflow"
    if len(parts) == 2 and parts[0] == DEPLOYMENTS_DIR:
        return "deployment"
    return "yaml"


def readable(root: Path, path: str) -> tuple[Path, str, FileKind]:
    """A project file wfops may read: inside the project (the path guard) and one of its YAML
    files or python sources."""
    resolved = inside_project(root, path)
    rel = relative_name(root, resolved)
    kind = file_kind(rel)
    if kind is None:
        raise UsageError(f"path {path}: wfops reads only the project's YAML files and python sources",
                         hint="list_project shows the files there are")
    if not resolved.is_file():
        raise UsageError(f"path {path} does not exist" if not resolved.exists() else f"path {path} is not a file",
                         hint="list_project shows the files there are")
    return resolved, rel, kind


def writable(root: Path, path: str) -> tuple[Path, str, Kind]:
    resolved = inside_project(root, path)
    rel = relative_name(root, resolved)
    found = file_kind(rel)
    kind: Kind | None = "wftest" if found == "test" and rel.startswith(TESTS_DIR + "/") else \
        found if found in ("workflow", "deployment", "sources") else None
    if kind is None:
        raise UsageError(f"path {path}: only a workflow (workflows/NAME.yaml), a deployment "
                         "(deployments/NAME.yaml), sources.yaml or a workflow test "
                         "(tests/**/NAME.wftest.yaml) can be written",
                         hint="python sources are edited outside wfops")
    if resolved.exists() and not resolved.is_file():
        raise UsageError(f"path {path} is not a file")
    return resolved, rel, kind


# -- listing and reading -----------------------------------------------------------------------

def list_project(root: Path) -> ProjectListing:
    project = load_project(root)
    users: dict[str, list[str]] = {}
    deployments = []
    hints = _locked_hints(root)
    tree = ArtifactSet({name: loaded.model for name, loaded in project.workflows.items()})
    for name, loaded in sorted(project.deployments.items()):
        model = loaded.model
        users.setdefault(model.workflow_name, []).append(name)
        calls = _calls(tree, model.workflow_name, dict(model.bindings))
        deployments.append(DeploymentEntry(name, loaded.file, model.workflow, dict(model.bindings),
                                           [entry.to_data() for entry in model.schedule],
                                           [ref for ref in calls if _destructive(hints.get(ref, {}))]))
    workflows = [WorkflowEntry(name, loaded.file, loaded.model.description, loaded.model.input,
                               users.get(name, [])) for name, loaded in sorted(project.workflows.items())]
    sources = []
    if project.sources is not None:
        for sid, spec in sorted(project.sources.model.sources.items()):
            detail = getattr(spec, "module", None) or getattr(spec, "url", None) or \
                " ".join(getattr(spec, "command", None) or [])
            sources.append(SourceEntry(sid, spec.kind, SOURCES_FILE, str(detail)))
    files: dict[str, list[str]] = {}
    for rel in _project_files(root):
        kind = file_kind(rel)
        if kind is not None:
            files.setdefault(kind, []).append(rel)
    return ProjectListing(str(project.root), workflows, deployments, sources, files, sorted(project.broken_files))


def _locked_hints(root: Path) -> dict[str, dict[str, Any]]:
    """Each locked capability's annotations by concrete ref (`source.name`); none without a lock."""
    try:
        lock = read_lock(root)
    except WfopsError:  # a corrupt lock is validate's and check's to report
        return {}
    if lock is None:
        return {}
    return {f"{sid}.{name}": dict(contract.annotations) for sid, source in lock.sources.items()
            for name, contract in source.capabilities.items()}


def _calls(workflows: ArtifactSet, workflow: str, bindings: dict[str, str]) -> list[str]:
    """The concrete capability refs a workflow calls, through its subworkflows too."""
    refs = used_refs(workflows.workflows[name] for name in workflows.tree(workflow))
    return list(dict.fromkeys(f"{bindings.get(source, source)}.{cap}"
                              for source, _, cap in (ref.partition(".") for ref in refs)))


def _destructive(hints: dict[str, Any]) -> bool:
    return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True


def _project_files(root: Path) -> Iterator[str]:
    count = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in HIDDEN and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            rel = Path(folder, name).relative_to(root).as_posix()
            if name.endswith((".py", *YAML_SUFFIXES)) or rel == LOCK_FILE:
                count += 1
                if count > MAX_LISTED_FILES:
                    return
                yield rel


def read_file(root: Path, path: str, start_line: int | None = None, end_line: int | None = None) -> FileText:
    resolved, rel, kind = readable(root, path)
    try:
        text = resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WfopsError(f"cannot read {rel}: {exc}") from None
    lines = text.splitlines(keepends=True)
    first = max(1, start_line or 1)
    last = len(lines) if end_line is None else min(end_line, len(lines))
    if start_line is None and end_line is None:
        return FileText(rel, kind, text, 1, len(lines), len(lines))
    return FileText(rel, kind, "".join(lines[first - 1:last]), first, max(last, first - 1), len(lines))


# -- writing -----------------------------------------------------------------------------------

def write_file(root: Path, path: str, text: str, *, force: bool = False,
               client: ClientWrites | None = None) -> WriteReport:
    """Write `text` to a workflow, deployment or sources.yaml, only if the project validated with
    it in place has no error it did not have before (unless `force`). `client`: an MCP client
    writes it, so the sources it declares anew are neither imported to validate it nor trusted."""
    resolved, rel, kind = writable(root, path)
    if "\0" in text:
        raise UsageError("the text contains a NUL byte")
    existed = resolved.exists()
    old = resolved.read_text(encoding="utf-8", errors="replace") if existed else None
    if client is not None and kind == "deployment":
        client.check_executor(rel, old, text)
    around = client.validating(old, text) if client is not None and kind == "sources" else nullcontext()
    with around:
        _, after, static = validate_overlay(root, text, kind, rel)
        added = new_errors(project_diagnostics(root)[0], after)
    if old == text:
        return WriteReport(rel, kind, False, False, False, after, added, text, unchanged=True, static_checks=static)
    diff = unified(rel, old, text)
    if added and not force:
        return WriteReport(rel, kind, False, not existed, False, after, added, text, static_checks=static, diff=diff)
    if client is not None and kind == "sources":
        client.record(old, text)  # first: a crash before the write leaves it held, not trusted
    resolved.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(resolved, text)
    return WriteReport(rel, kind, True, not existed, bool(added), after, added, text, static_checks=static,
                       diff=diff)


def unified(rel: str, old: str | None, new: str) -> str:
    """What a write changes, as a unified diff (`/dev/null` for a file it creates)."""
    return "".join(difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                        "/dev/null" if old is None else f"a/{rel}", f"b/{rel}"))


def new_errors(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """Errors of `after` that `before` did not have (lines may move, so they are not compared)."""
    had = Counter(_key(d) for d in before if d.is_error)
    added = []
    for d in after:
        if not d.is_error:
            continue
        if had[_key(d)] > 0:
            had[_key(d)] -= 1
        else:
            added.append(d)
    return added


def _key(d: Diagnostic) -> tuple[str, str, str]:
    return (d.file, d.code, d.message)


def patch_file(root: Path, path: str, patch: Any, *, client: ClientWrites | None = None) -> WriteReport:
    """Apply an RFC 6902 JSON Patch to a workflow or deployment file (or sources.yaml), keeping
    its comments and formatting, then write it as `write_file` does (never forced)."""
    resolved, rel, _kind = writable(root, path)
    if not resolved.is_file():
        raise UsageError(f"path {path} does not exist", hint="create it with write_file or new_workflow")
    text = resolved.read_text(encoding="utf-8")
    return write_file(root, rel, patched_text(text, patch, rel), client=client)


def patched_text(text: str, patch: Any, file: str) -> str:
    """`text` with `patch` applied, re-emitted with the file's own indentation and quoting."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap long lines
    mapping, offset = _indentation(text)
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    try:
        doc = yaml.load(text)
    except YAMLError as exc:
        raise UsageError(f"{file} does not parse as YAML, so it cannot be patched: {exc}",
                         hint="read_file it and repair it with write_file") from None
    doc = apply_patch(doc, patch)
    doc = _restyled(doc, [])
    out = StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _restyled(node: Any, peers: list[Any]) -> Any:
    """`node` with each value a patch added (plain dicts and lists) in the style its peers have
    where it stands: the same key of the sibling items (another step's `with:`), or the other
    items of its list. So a file that writes `with: {value: 1}` gets a new step's `with:` so too."""
    if _is_new(node):
        return _styled(node, peers)
    if isinstance(node, CommentedMap):
        for key in list(node):
            node[key] = _restyled(node[key], [p[key] for p in peers if isinstance(p, CommentedMap) and key in p])
    elif isinstance(node, CommentedSeq):
        old = [item for item in node if not _is_new(item)]
        kin = old + [item for p in peers if isinstance(p, CommentedSeq) for item in p]
        for index, item in enumerate(list(node)):
            node[index] = _restyled(item, [k for k in kin if k is not item])
    return node


def _is_new(node: Any) -> bool:
    return isinstance(node, dict | list) and not isinstance(node, CommentedMap | CommentedSeq)


def _styled(value: Any, peers: list[Any]) -> Any:
    """A new value as ruamel nodes, flow style where most of its peers that are containers are."""
    containers = [p for p in peers if isinstance(p, CommentedMap | CommentedSeq)]
    flow = bool(containers) and sum(bool(p.fa.flow_style()) for p in containers) * 2 > len(containers)
    if isinstance(value, dict):
        styled: CommentedMap | CommentedSeq = CommentedMap()
        for key, item in value.items():
            styled[key] = _styled(item, [p[key] for p in containers if isinstance(p, CommentedMap) and key in p])
    elif isinstance(value, list):
        kin = [item for p in containers if isinstance(p, CommentedSeq) for item in p]
        styled = CommentedSeq([_styled(item, kin) for item in value])
    else:
        return value
    if flow:
        styled.fa.set_flow_style()
    else:
        styled.fa.set_block_style()
    return styled


_KEY_LINE = re.compile(r"^( +)[^\s#\-][^:#]*:(\s|$)")
_ITEM_LINE = re.compile(r"^( *)- ")
_OPENS = re.compile(r"^ *[^\s#\-][^:#]*:\s*(#.*)?$")  # a key whose value is the block below it


def _indentation(text: str) -> tuple[int, int]:
    """(mapping indent, sequence dash offset) as the file writes them: the smallest indent of a
    nested key, and how far a top-level key's list items are indented (default 2 and 2)."""
    lines = text.splitlines()
    # A nested key's indent past the key that opens its block (`with:` then `  value: 2`); keys
    # of a list item stand past its dash, which is the sequence offset, not the mapping indent.
    steps = [len(m.group(1)) - (len(before) - len(before.lstrip()))
             for before, line in zip(lines, lines[1:], strict=False)
             if (m := _KEY_LINE.match(line)) and _OPENS.match(before)]
    mapping = min((step for step in steps if step > 0), default=2)
    offset = 2
    for before, line in zip(lines, lines[1:], strict=False):
        item = _ITEM_LINE.match(line)
        if item is not None and re.match(r"^[^\s#][^:]*:\s*(#.*)?$", before):
            offset = len(item.group(1))
            break
    return mapping, offset


# -- scaffolding -------------------------------------------------------------------------------

def new_workflow(root: Path, capability: Any, name: str, *, write: bool = False) -> Skeleton:
    """A workflow that calls `capability` (a CapabilityInfo), its required inputs bound from a
    generated input schema and every outcome routed; written to workflows/NAME.yaml if asked."""
    if not re.fullmatch(NAME_PATTERN, name):
        raise UsageError(f"workflow name {name!r} is not valid", hint=f"names match {NAME_PATTERN}")
    path = f"{WORKFLOWS_DIR}/{name}.yaml"
    if inside_project(root, path, what="workflow file", argument="name").exists() and write:
        raise UsageError(f"{path} exists already", hint="pick another name, or edit it with patch_workflow")
    text = skeleton_text(name, capability)
    _, found, _ = validate_overlay(root, text, "workflow", path)
    mine = [d for d in found if d.file == path]
    report = write_file(root, path, text) if write else None
    return Skeleton(name, path, text, capability.ref, mine, report)


_SECRET = re.compile(r"token|password|passwd|passphrase|api[ _-]?key|secret|credential", re.IGNORECASE)


def secret_inputs(schema: Any) -> dict[str, str]:
    """The inputs of a capability's schema that hold a secret (by name or description), each with
    the environment variable a deployment's `secrets:` would read it from (`api_key` -> API_KEY)."""
    properties = (schema or {}).get("properties") or {}
    found = {}
    for key, prop in properties.items():
        described = prop.get("description", "") if isinstance(prop, dict) else ""
        if _SECRET.search(str(key)) or _SECRET.search(str(described)):
            found[str(key)] = re.sub(r"[^A-Za-z0-9]+", "_", str(key)).strip("_").upper() or "SECRET"
    return found


def skeleton_text(name: str, capability: Any) -> str:
    schema = capability.input_schema or {}
    properties = schema.get("properties") or {}
    secrets = secret_inputs(schema)
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    inputs = {key: properties.get(key, {}) for key in required if key not in secrets}
    lines = ["# yaml-language-server: $schema=../.wfops-schemas/workflow.schema.json",
             f"name: {name}",
             "version: 1",
             f"description: {json.dumps(_first_line(capability.description) or 'Calls ' + capability.ref)}",
             "input:",
             "  type: object",
             f"  required: {json.dumps([k for k in required if k not in secrets])}",
             f"  properties: {json.dumps(inputs, sort_keys=True)}",
             "state:",
             "  result: {}",
             "output:",
             "  result: $state.result",
             "steps:",
             "  - id: call",
             f"    uses: {capability.ref}",
             f"    with: {{{', '.join(f'{json.dumps(k)}: {_bound(k, secrets)}' for k in required)}}}",
             "    save: state.result"]
    outcomes = list(capability.outcomes) or ["ok"]
    if outcomes == ["ok"]:
        lines.append("    next: end")
    else:
        lines.append("    on: {" + ", ".join(f"{json.dumps(o)}: end" for o in outcomes) + "}")
    return "\n".join(lines) + "\n"


def _bound(key: str, secrets: dict[str, str]) -> str:
    # A secret is read from the environment when the step runs: run inputs are stored with the run.
    return f"$secret.{secrets[key]}" if key in secrets else f"$input.{key}"


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
