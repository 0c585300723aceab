"""`wfops init [DIR] [--force]`: scaffold a project that validates, compiles, checks and runs as is.

Templates live in `wfops/scaffold/project/` (package data). A path part starting
with `dot-` becomes a dot file (`dot-gitignore` -> `.gitignore`) and a `.tmpl`
suffix is dropped: so packaging never skips hidden files and the template python
is never imported or linted as wfops code. The editor schemas are written to
`.wfops-schemas/` and committed with the project, so yaml-language-server resolves
the `# yaml-language-server: $schema=...` line of every file offline.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from wfops.cli.output import say
from wfops.errors import UsageError, WfopsError

SCHEMA_DIR = ".wfops-schemas"
SCHEMA_KINDS = ("workflow", "deployment", "sources")
IGNORE_LINE = ".wfops/"


def run(*, directory: str = ".", force: bool = False) -> int:
    if not directory.strip():
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
            path.write_text(text, encoding="utf-8", newline="\n")
        _merge_gitignore(target / ".gitignore", gitignore)
    except OSError as exc:  # a read-only place, a file where a folder should be, a full disk
        where = exc.filename or target
        raise WfopsError(f"cannot write the project in {directory}: {where}: {exc.strerror or exc}",
                         hint="choose a directory you can write to") from None
    _next_steps(target, sorted([*files, ".gitignore"]))
    return 0


def scaffold_files() -> dict[str, str]:
    """Project-relative path -> text of every file `init` writes."""
    root = resources.files("wfops") / "scaffold" / "project"
    found = dict(_walk(root, ()))
    for kind in SCHEMA_KINDS:
        found[f"{SCHEMA_DIR}/{kind}.schema.json"] = schema_text(kind)
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


def schema_text(kind: str) -> str:
    """The editor JSON Schema of one file kind: the copy shipped in wfops/schemas, or generated."""
    shipped = resources.files("wfops") / "schemas" / f"{kind}.schema.json"
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    from wfops.model.deployment import Deployment
    from wfops.model.sources import SourcesFile
    from wfops.model.workflow import Workflow

    model = {"workflow": Workflow, "deployment": Deployment, "sources": SourcesFile}[kind]
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **model.model_json_schema(by_alias=True)}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _merge_gitignore(path: Path, template: str) -> None:
    """Add what wfops needs ignored to an existing .gitignore instead of refusing or replacing it."""
    if not path.exists():
        path.write_text(template, encoding="utf-8", newline="\n")
        return
    current = path.read_text(encoding="utf-8")
    wanted = [line for line in template.splitlines() if line and not line.startswith("#")]
    missing = [line for line in wanted if line not in current.splitlines()]
    if missing:
        sep = "" if current.endswith("\n") or not current else "\n"
        path.write_text(current + sep + "\n".join(missing) + "\n", encoding="utf-8", newline="\n")


def _next_steps(target: Path, written: list[str]) -> None:
    say(f"Created a wfops project in {target}:")
    for rel in written:
        if not rel.startswith(SCHEMA_DIR):
            say(f"  {rel}")
    say(f"  {SCHEMA_DIR}/ (JSON Schemas for editors; refresh with `wfops schema --kind K`)")
    say("")
    say("Next steps:")
    if target.resolve() != Path.cwd().resolve():
        say(f"  cd {shlex.quote(str(target))}")
    say("  wfops validate                      # syntax, schema and static checks")
    say("  wfops compile                       # write wfops.lock (commit it)")
    say("  wfops run hello.local --input name=you")
    say("  wfops graph hello                   # the workflow as a Mermaid diagram")
    if not _in_git_repo(target):
        say("  git init                            # pre-commit and CI need a git repository")
    say("  pre-commit install                  # validate and check on every commit")


def _in_git_repo(target: Path) -> bool:
    here = target.resolve()
    return any((folder / ".git").exists() for folder in (here, *here.parents))
