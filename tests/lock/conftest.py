"""A small real project (python source, subworkflow, deployments) for the lock tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write

OPS = '''
from pydantic import BaseModel
import wfops


class GreetIn(BaseModel):
    name: str
    times: int = 1


class GreetOut(BaseModel):
    text: str


@wfops.node
def greet(payload: GreetIn) -> GreetOut:
    """Say hello."""
    return GreetOut(text=("hello " + payload.name) * payload.times)


@wfops.node(outcomes=["ok", "empty"])
def shout(payload: GreetOut) -> wfops.Result[GreetOut]:
    return wfops.Result(output=GreetOut(text=payload.text.upper()))
'''

FILES = {
    "sources.yaml": """
        sources:
          ops:
            kind: python
            module: nodes.ops
        """,
    "nodes/__init__.py": "",
    "nodes/ops.py": OPS,
    "workflows/hello.yaml": """
        # the root workflow
        name: hello
        input:
          type: object
          properties: {name: {type: string}}
        state:
          text: {type: string}
        output: {text: $state.text}
        steps:
          - id: greet
            uses: ops.greet
            with: {name: $input.name}
            save: {text: state.text}
            next: loud
          - id: loud
            workflow: loud
            with: {text: $state.text}
            save: {text: state.text}
            next: end
        """,
    "workflows/loud.yaml": """
        name: loud
        input: {type: object, properties: {text: {type: string}}}
        state:
          text: {type: string}
        output: {text: $state.text}
        steps:
          - id: shout
            uses: ops.shout
            with: {text: $input.text}
            save: {text: state.text}
            on: {ok: end, empty: end}
        """,
    "deployments/hello.local.yaml": """
        name: hello.local
        workflow: hello
        input: {name: ada}
        """,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    return write(root, FILES)


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    # Edits within one second keep the size and mtime: a cached .pyc would hide them.
    monkeypatch.setattr("sys.dont_write_bytecode", True)
