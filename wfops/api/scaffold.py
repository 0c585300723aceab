"""`init`: scaffold a project that validates, compiles, checks and runs as it is; `schema`.

Templates live in `wfops/scaffold/project/` (package data). A path part starting
with `dot-` becomes a dot file (`dot-gitignore` -> `.gitignore`) and a `.tmpl`
suffix is dropped: so packaging never skips hidden files and the template python
is never imported or linted as wfops code. The editor schemas are written to
`.wfops-schemas/` and committed with the project, so yaml-language-server resolves
the `# yaml-language-server: $schema=...` line of every file offline.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from wfops.api.ci_schedule import unscheduled
from wfops.api.examples import example_files
from wfops.api.file_plan import write_all
from wfops.api.install_spec import install_spec
from wfops.api.scaffold_repo import (
    PRECOMMIT,
    ci_path,
    ci_workflow,
    git_root,
    hooks_config,
    merge_hooks,
)
from wfops.errors import UsageError
from wfops.model.json_schema import KINDS, committed_path, schema_text

SCHEMA_DIR = ".wfops-schemas"
VSCODE_SETTINGS = ".vscode/settings.json"
# The hello project's own files, which an example replaces.
HELLO_FILES = frozenset({"sources.yaml", "workflows/hello.yaml", "deployments/hello.local.yaml", "nodes/__init__.py",
                         "nodes/hello.py", "tests/hello.wftest.yaml"})
SCHEMA_KINDS = ("workflow", "deployment", "sources", "wftest")


@dataclass(frozen=True)
class Scaffold:
    directory: Path
    written: list[str]      # project-relative files, sorted
    in_git: bool            # the directory is inside a git repository already
    # When the project is in a subdirectory of a git repository: the repository root and the
    # files written or updated there (pre-commit and GitHub read them only there).
    repository: Path | None = None
    at_root: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)   # existing files wfops's lines were added to
    wfops_spec: str = ""    # what the CI workflow passes to `pip install` to get wfops
    deployment: str = "hello.local"  # what the project runs first (the example's, with `example`)
    workflow: str = "hello"


def schema(kind: str = "workflow") -> str:
    """The JSON Schema of a file kind (workflow, deployment or sources), as editors read it."""

    if kind not in KINDS:
        raise UsageError(f"unknown schema kind {kind!r}", hint="use --kind " + ", --kind ".join(KINDS))
    return schema_text(kind)


def init(directory: str | Path = ".", *, force: bool = False, wfops_spec: str | None = None,
         example: str | None = None) -> Scaffold:
    """Write a working project into `directory`, all or nothing; UsageError where it would
    overwrite (unless `force`) or where something is in the way. `wfops_spec`: what the CI
    workflow passes to `pip install` to get wfops (default: how this wfops was installed,
    `wfops.api.install_spec`). `example`: a worked example (`wfops.api.examples.names()`)
    instead of the hello workflow.

    Inside a git repository the pre-commit config and the CI workflow go to the repository
    root, pointing at the project; an existing pre-commit config and .gitignore get wfops's
    lines added, keeping everything else."""
    if not str(directory).strip():
        raise UsageError("the project directory is empty", hint="give a directory, or `.` for this one")
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{directory} exists and is not a directory",
                         hint="give a new or an existing directory")
    root = git_root(target)
    base = root or target.resolve()
    project = target.resolve().relative_to(base).as_posix()
    spec = _spec(wfops_spec)
    files = scaffold_files(project, wfops_spec=spec, example=example)
    gitignore = files.pop(".gitignore")
    hooks = files.pop(PRECOMMIT)
    ci_rel = ci_path(".")
    ci = files.pop(ci_rel)
    plan = {target / rel: text for rel, text in files.items()}
    plan[base / ci_path(project)] = ci
    scheduled, scheduled_text = unscheduled(project, spec)
    plan[base / scheduled] = scheduled_text
    conflicts = [path for path in plan if path.exists()]
    if conflicts and not force:
        more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
        raise UsageError(f"{_shown(conflicts[0], target)} already exists{more}; nothing was written",
                         hint="pass --force to overwrite the scaffold's files")
    merged: list[str] = []
    hooks_path = base / PRECOMMIT
    if hooks_path.is_file():
        added = merge_hooks(_read(hooks_path, target), hooks, _shown(hooks_path, target))
        if added is not None:
            plan[hooks_path] = added
            merged.append(_shown(hooks_path, target))
    else:
        plan[hooks_path] = hooks
    settings_path = base / VSCODE_SETTINGS
    settings = _merge_settings(_read(settings_path, target) if settings_path.is_file() else None, project)
    if settings is not None:
        plan[settings_path] = settings
        if settings_path.is_file():
            merged.append(_shown(settings_path, target))
    ignore_path = target / ".gitignore"
    ignored = _merge_gitignore(_read(ignore_path, target) if ignore_path.is_file() else None, gitignore)
    if ignored is not None:
        plan[ignore_path] = ignored
        if ignore_path.is_file():
            merged.append(_shown(ignore_path, target))
    write_all(list(plan.items()), target)
    here = target.resolve()
    written = sorted(p.resolve().relative_to(here).as_posix() for p in plan if p.resolve().is_relative_to(here))
    at_root = sorted(p.resolve().relative_to(base).as_posix() for p in plan
                     if not p.resolve().is_relative_to(here))
    first = _first_run(files)
    return Scaffold(target, written, root is not None, root if project != "." else None, at_root, merged,
                    spec, *first)


def scaffold_files(project: str = ".", *, wfops_spec: str | None = None,
                   example: str | None = None) -> dict[str, str]:
    """Path -> text of every file `init` writes: project-relative, except the pre-commit
    config and the CI workflow, which belong at the repository root (the project is at
    `project` below it). With `example`, its files take the place of the hello project's."""

    root = resources.files("wfops") / "scaffold" / "project"
    found = dict(_walk(root, ()))
    if example is not None:
        found = {rel: text for rel, text in found.items() if rel not in HELLO_FILES}
        found.update(example_files(example, SCHEMA_DIR))
    for kind in SCHEMA_KINDS:
        # The committed copies: generated from the models and guarded by a test to match.
        found[f"{SCHEMA_DIR}/{kind}.schema.json"] = committed_path(kind).read_text(encoding="utf-8")
    found[PRECOMMIT] = hooks_config(found[PRECOMMIT], project)
    found[ci_path(".")] = ci_workflow(found[ci_path(".")], project, _spec(wfops_spec))
    return found


def _first_run(files: dict[str, str]) -> tuple[str, str]:
    """The deployment and workflow the next steps name: the project's first deployment."""
    for rel in sorted(files):
        if rel.startswith("deployments/") and rel.endswith(".local.yaml"):
            name = rel.removeprefix("deployments/").removesuffix(".yaml")
            return name, name.removesuffix(".local")
    return "hello.local", "hello"


def _spec(given: str | None) -> str:
    """The pip requirement CI installs wfops with: `given`, else how this wfops was installed."""
    spec = given.strip() if given is not None else install_spec()
    if not spec:
        raise UsageError("--wfops-spec is empty", hint="give a pip requirement, e.g. wfops==0.1.0 or "
                         "'wfops @ git+https://host/wfops@<commit>'")
    return spec


def _read(path: Path, target: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {_shown(path, target)}: {getattr(exc, 'strerror', None) or exc}; "
                         "nothing was written", hint="make it a readable UTF-8 text file") from None


def _shown(path: Path, target: Path) -> str:
    """`path` as the user would name it: below the target as `target/...`, else absolute."""
    try:
        return (target / path.resolve().relative_to(target.resolve())).as_posix()
    except ValueError:
        return str(path.resolve())


def _walk(node: Traversable, parts: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        name = "." + child.name[4:] if child.name.startswith("dot-") else child.name
        if child.is_dir():
            yield from _walk(child, (*parts, name))
        else:
            yield "/".join((*parts, name.removesuffix(".tmpl"))), child.read_text(encoding="utf-8")


def editor_schemas(project: str) -> dict[str, list[str]]:
    """VS Code's `yaml.schemas` for a project at `project` (relative to the workspace, which
    is the repository root): each file kind's schema and the files it applies to, so that
    files without the `# yaml-language-server` line are checked too."""
    at = "" if project == "." else project.rstrip("/") + "/"
    globs = {"workflow": ["workflows/*.yaml", "workflows/*.yml"],
             "deployment": ["deployments/*.yaml", "deployments/*.yml"],
             "sources": ["sources.yaml"], "wftest": ["**/*.wftest.yaml", "**/*.wftest.yml"]}
    return {f"./{at}{SCHEMA_DIR}/{kind}.schema.json": [at + g for g in globs[kind]] for kind in SCHEMA_KINDS}


def _merge_settings(current: str | None, project: str) -> str | None:
    """`.vscode/settings.json` with the project's `yaml.schemas` added (None: nothing to add,
    or a file that is not plain JSON, which is left as it is)."""
    wanted = editor_schemas(project)
    if current is None:
        return json.dumps({"yaml.schemas": wanted}, indent=2) + "\n"
    try:
        settings = json.loads(current)
    except ValueError:  # JSON with comments: VS Code reads it, json does not; leave it alone
        return None
    schemas = settings.get("yaml.schemas") if isinstance(settings, dict) else None
    if not isinstance(settings, dict) or not isinstance(schemas, dict | type(None)):
        return None
    schemas = dict(schemas or {})
    missing = {k: v for k, v in wanted.items() if k not in schemas}
    if not missing:
        return None
    settings["yaml.schemas"] = {**schemas, **missing}
    return json.dumps(settings, indent=2) + "\n"


def _merge_gitignore(current: str | None, template: str) -> str | None:
    """The .gitignore with what wfops needs ignored added (None: nothing to add)."""
    if current is None:
        return template
    wanted = [line for line in template.splitlines() if line and not line.startswith("#")]
    missing = [line for line in wanted if line not in current.splitlines()]
    if not missing:
        return None
    sep = "" if current.endswith("\n") or not current else "\n"
    return current + sep + "\n".join(missing) + "\n"
