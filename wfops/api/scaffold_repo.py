"""The repository-level part of `init`: pre-commit hooks and the CI workflow.

pre-commit reads `.pre-commit-config.yaml` at the root of the git repository and runs
hooks there, and GitHub reads `.github/workflows/` there too; so a project made in a
subdirectory of a repository gets both at the repository root, pointing at the
project (`--project sub`, `working-directory: sub`). An existing pre-commit config
gets wfops's hooks added (a round trip keeps its comments and layout), never replaced.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from wfops.errors import UsageError

PRECOMMIT = ".pre-commit-config.yaml"
_FILES_AT_ROOT = r"(\.ya?ml|\.py|(^|/)wfops\.lock)$"


def git_root(directory: Path) -> Path | None:
    """The root of the git repository `directory` is in (it need not exist yet)."""
    here = directory.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def hooks_config(template: str, project: str) -> str:
    """The scaffold's pre-commit config for a project at `project` (repository-relative)."""
    if project == ".":
        return template
    files = "^" + re.escape(project + "/") + r"(.*\.ya?ml|.*\.py|(.*/)?wfops\.lock)$"
    text = template.replace(f"files: '{_FILES_AT_ROOT}'", "files: '" + files.replace("'", "''") + "'")
    return text.replace("        language: system\n",
                        f"        language: system\n        args: [--project, {json.dumps(project)}]\n")


def ci_workflow(template: str, project: str, spec: str) -> str:
    """The CI workflow for a project at `project`, installing wfops with `pip install SPEC`."""
    return template.replace("{{project}}", json.dumps(project)).replace("{{wfops_pip}}", json.dumps(spec))


def ci_path(project: str) -> str:
    """`wfops.yml`, or `wfops-<subdir>.yml` so that two projects of one repository do not collide."""
    if project == ".":
        return ".github/workflows/wfops.yml"
    return ".github/workflows/wfops-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", project).strip("-") + ".yml"


def merge_hooks(existing: str, fresh: str, shown: str) -> str | None:
    """`existing` with the hooks of `fresh` it lacks added (None: it has them all already).

    A hook counts as present when one with the same id and the same `args` is configured,
    from any repository (the published wfops hooks included). The missing ones go into a
    new `repo: local` entry, inserted as text at the end of the `repos:` list in the file's
    own list style, so every byte of the user's file stays as it was; only a layout that
    leaves no such place (a flow-style `repos: [...]`) is rewritten by a YAML round trip,
    which still keeps the comments."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.indent(**_indentation(existing))
    yaml.width = 4096
    ours = yaml.load(fresh)["repos"][0]
    try:
        doc = yaml.load(existing)
    except YAMLError as exc:
        raise UsageError(f"{shown} is not valid YAML ({str(exc).splitlines()[0]}); nothing was written",
                         hint="fix it, or add these hooks to it by hand:\n" + _snippet(fresh)) from None
    if doc is None:
        doc = CommentedMap()
    repos = doc.get("repos", CommentedSeq()) if isinstance(doc, dict) else None
    if not isinstance(repos, list):
        raise UsageError(f"{shown} has no `repos:` list; nothing was written",
                         hint="add these hooks to it by hand:\n" + _snippet(fresh))
    present = {(h.get("id"), tuple(h.get("args") or ())) for r in repos if isinstance(r, dict)
               for h in (r.get("hooks") or []) if isinstance(h, dict)}
    missing = [h for h in ours["hooks"] if (h["id"], tuple(h.get("args") or ())) not in present]
    if not missing:
        return None
    ours["hooks"] = CommentedSeq(missing)
    entry = io.StringIO()
    yaml.dump({"repos": [ours]}, entry)
    inserted = _insert_entry(existing, doc, entry.getvalue().split("\n", 1)[1])
    if inserted is not None and _holds(inserted, missing):
        return inserted
    repos.append(ours)
    doc["repos"] = repos
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _insert_entry(existing: str, doc: Any, entry: str) -> str | None:
    """`entry` (lines of one `repos:` item) placed after the last item of a block-style
    `repos:` list; None when the file has no such list to extend."""
    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if "repos" not in doc:
        return "".join(lines) + "repos:\n" + entry
    repos = doc["repos"]
    if not repos or getattr(repos.fa, "flow_style", lambda: False)() or doc.lc.key("repos")[1] != 0:
        return None
    start = doc.lc.key("repos")[0]
    later = [doc.lc.key(key)[0] for key in doc if doc.lc.key(key)[0] > start]
    end = min(later) if later else len(lines)
    # Blank lines, and comments at the margin (they introduce the next key), stay after it.
    while end > start + 1 and (not lines[end - 1].strip() or (later and lines[end - 1].startswith("#"))):
        end -= 1
    return "".join(lines[:end]) + entry + "".join(lines[end:])


def _holds(text: str, hooks: list[Any]) -> bool:
    """The text parses and its `repos` hold every hook of `hooks` (a guard on the insertion)."""
    try:
        doc = YAML(typ="safe").load(text)
    except YAMLError:
        return False
    found = [(h.get("id"), h.get("args")) for r in doc.get("repos") or [] if isinstance(r, dict)
             for h in r.get("hooks") or [] if isinstance(h, dict)]
    return all((h["id"], list(h["args"]) if "args" in h else None) in found for h in hooks)


def _indentation(text: str) -> dict[str, int]:
    """The file's own list style, read off its first `- repo:` line, so the round trip
    keeps it: `  - repo:` (the default), `- repo:`, `-   repo:` (pre-commit's own)."""
    found = re.search(r"^( *)-( +)repo:", text, re.M)
    if not found:
        return {"mapping": 2, "sequence": 4, "offset": 2}
    offset = len(found.group(1))
    sequence = offset + 1 + len(found.group(2))
    return {"mapping": sequence - offset, "sequence": sequence, "offset": offset}


def _snippet(fresh: str) -> str:
    """The `repos:` entry of the scaffold's config, as text to paste."""
    lines = fresh.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  - repo: local"))
    return "\n".join(lines[start:])
