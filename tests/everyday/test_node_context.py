"""A python node's `context.project_root`: the project root, absolute, wherever wfops was
started from (a node's place for its own files)."""

from __future__ import annotations

from pathlib import Path

from tests.harness import run_cli

FILES = {
    "sources.yaml": "sources:\n  files: {kind: python, module: nodes}\n",
    "nodes.py": '''
import wfops
from pydantic import BaseModel


class Note(BaseModel):
    text: str


class Saved(BaseModel):
    path: str


@wfops.node
def keep(payload: Note, context) -> Saved:
    folder = context.project_root / "notes"
    folder.mkdir(exist_ok=True)
    target = folder / f"{context.step}.txt"
    target.write_text(payload.text)
    return Saved(path=str(target))
''',
    "workflows/keep.yaml": """\
name: keep
version: 1
input: {type: object, properties: {text: {type: string}}}
state: {path: {type: string}}
output: {path: $state.path}
steps:
  - id: save
    uses: files.keep
    with: {text: $input.text}
    save: {path: state.path}
    next: end
""",
    "deployments/keep.local.yaml": "name: keep.local\nworkflow: keep\n",
}


def test_project_root_on_the_node_context_wherever_wfops_starts(make_project) -> None:
    root = make_project(FILES)
    (root / "data").mkdir()
    assert run_cli("compile", cwd=root).code == 0
    done = run_cli("run", "keep.local", "--input", "text=hi", "--json", cwd=root / "data")
    assert done.code == 0, done.stderr
    path = Path(done.json()["output"]["path"])
    assert path == root.resolve() / "notes" / "save.txt" and path.read_text() == "hi"
    assert not (root / "data" / "notes").exists()
    called = run_cli("caps", "call", "files.keep", "--input-file", "-", stdin='{"text": "again"}', cwd=root / "data")
    assert called.code == 0, called.stderr
    assert called.json()["output"]["path"] == str(root.resolve() / "notes" / "keep.txt")
