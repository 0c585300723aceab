"""The worked examples, shipped in the package: `wfops init --example NAME`.

The repository's own project (its `sources.yaml`, `workflows/`, `deployments/`, `tests/`
and the python package `examples/`) is the one declaration of the examples. The wheel
carries a copy in `wfops/worked/`, generated from it and guarded by a test that they match:

    python -m wfops.api.examples      # regenerate wfops/worked/ from the repository's files

(a `.tmpl` suffix on python files keeps the copy from being imported or linted as wfops
code, as in the scaffold). An example is one deployment, `NAME.local`, with the
workflows it reaches, the sources they call, the python packages of those sources, and
the workflow tests of those workflows.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from wfops.errors import UsageError

PACKAGED = "worked"
_FILES = ("sources.yaml", "workflows", "deployments", "tests", "examples")
_SUFFIXES = (".yaml", ".yml", ".py", ".md", ".json", ".txt", ".csv")


def repository_files(repo: Path) -> dict[str, str]:
    """What the packaged copy must hold, read from the repository's own project."""
    found: dict[str, str] = {}
    for name in _FILES:
        top = repo / name
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in paths:
            rel = path.relative_to(repo).as_posix()
            if "__pycache__" in rel or path.suffix not in _SUFFIXES:
                continue
            if name == "tests" and not rel.endswith((".wftest.yaml", ".wftest.yml")):
                continue  # the repository's pytest suite is not an example
            found[rel + (".tmpl" if path.suffix == ".py" else "")] = path.read_text(encoding="utf-8")
    return found


def packaged_files() -> dict[str, str]:
    """The copy in the package, as stored (python files with their `.tmpl` suffix)."""
    return dict(_walk(resources.files("wfops") / PACKAGED, ()))


def _walk(node: Traversable, parts: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if not node.is_dir():
        return
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        if child.is_dir():
            yield from _walk(child, (*parts, child.name))
        else:
            yield "/".join((*parts, child.name)), child.read_text(encoding="utf-8")


def names() -> list[str]:
    """The examples: each deployment `NAME.local` of the packaged copy."""
    return sorted(rel.removeprefix("deployments/").removesuffix(".local.yaml") for rel in packaged_files()
                  if rel.startswith("deployments/") and rel.endswith(".local.yaml"))


def example_files(name: str, schema_dir: str) -> dict[str, str]:
    """Project-relative path -> text of example `name`, its schema lines pointing at
    `schema_dir` (the project's editor schemas)."""
    files = {rel.removesuffix(".tmpl"): text for rel, text in packaged_files().items()}
    deployment = f"deployments/{name}.local.yaml"
    if deployment not in files:
        raise UsageError(f"no example {name!r}", hint="examples: " + ", ".join(names()))
    yaml = YAML(typ="safe")
    workflows = {str(data["name"]): rel for rel in files if rel.startswith("workflows/")
                 if isinstance(data := yaml.load(files[rel]), dict) and "name" in data}
    dep = yaml.load(files[deployment])
    tree: list[str] = []
    todo = [str(dep["workflow"]).partition("@")[0]]
    while todo:
        wf = todo.pop()
        if wf in tree or wf not in workflows:
            continue
        tree.append(wf)
        todo += [str(v) for v in _values(yaml.load(files[workflows[wf]]), "workflow")]
    bindings = dict(dep.get("bindings") or {})
    used = {bindings.get(ref.split(".")[0], ref.split(".")[0]) for wf in tree
            for ref in _values(yaml.load(files[workflows[wf]]), "uses")} - {"std"}
    chosen = {deployment: files[deployment], **{workflows[wf]: files[workflows[wf]] for wf in tree}}
    chosen.update({rel: text for rel, text in files.items() if rel.startswith("tests/")
                   and isinstance(data := yaml.load(text), dict) and data.get("workflow") in tree})
    declared = yaml.load(files["sources.yaml"]).get("sources") or {}
    for source in used:
        for folder in _folders_of(declared.get(source) or {}, files):
            chosen.update({rel: text for rel, text in files.items() if rel.startswith(folder)})
    # Data files the example's input names (its deployment's, its tests'): `{path: examples/...}`.
    chosen.update({value: files[value] for rel in list(chosen) if rel.endswith((".yaml", ".yml"))
                   for value in _strings(yaml.load(chosen[rel]))
                   if value in files})
    chosen["sources.yaml"] = _only_sources(files["sources.yaml"], used)
    return {rel: _schema_line(rel, text, schema_dir) for rel, text in sorted(chosen.items())}


def _folders_of(source: dict[str, Any], files: dict[str, str]) -> set[str]:
    """The folders of the example's files a source stands on: a python source's package, the
    folder of an OpenAPI document (`spec:`) and of each script a command's `argv` names."""
    module = str(source.get("module") or "")
    folders = {module.split(".")[0] + "/"} if module else set()
    named = [source.get("spec")] + [arg for cap in (source.get("capabilities") or {}).values()
                                    if isinstance(cap, dict) for arg in cap.get("argv") or []]
    folders |= {rel.rsplit("/", 1)[0] + "/" for rel in map(str, named) if rel in files and "/" in rel}
    return folders


def _strings(node: Any) -> Iterator[str]:
    """Every string value in a YAML document, at any depth."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _values(node: Any, key: str) -> Iterator[Any]:
    """Every string value of `key` in a YAML document, at any depth."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from _values(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, key)


def _only_sources(text: str, used: set[str]) -> str:
    """sources.yaml with only the sources `used` (comments and layout kept)."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # keep each line as written
    doc = yaml.load(text)
    for source in [s for s in doc["sources"] if s not in used]:
        del doc["sources"][source]
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _schema_line(rel: str, text: str, schema_dir: str) -> str:
    """The `# yaml-language-server: $schema=` line pointed at the project's schemas."""
    first, sep, rest = text.partition("\n")
    marker = "# yaml-language-server: $schema="
    if not first.startswith(marker):
        return text
    kind = first.rsplit("/", 1)[-1]
    up = "../" * rel.count("/")
    return f"{marker}{up}{schema_dir}/{kind}{sep}{rest}"


def _write_packaged(repo: Path) -> None:
    target = repo / "wfops" / PACKAGED
    wanted = repository_files(repo)
    for old in sorted(target.rglob("*"), reverse=True) if target.exists() else []:
        rel = old.relative_to(target).as_posix()
        if old.is_file() and rel not in wanted:
            old.unlink()
        elif old.is_dir() and not any(old.iterdir()):
            old.rmdir()
    for rel, text in wanted.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {len(wanted)} files to {target}\n")


if __name__ == "__main__":
    _write_packaged(Path(__file__).resolve().parents[2])
