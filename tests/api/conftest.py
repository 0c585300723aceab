"""A small project for the API and the cross-face tests: a python source with a good node,
a node whose output breaks its contract, and a sync node that blocks until released."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import write

OPS = '''
import threading

from pydantic import BaseModel

import wfops

RELEASE = threading.Event()
STARTED = threading.Event()


class In(BaseModel):
    n: int


class Out(BaseModel):
    doubled: int


@wfops.node
def double(payload: In) -> Out:
    return Out(doubled=payload.n * 2)


@wfops.node
def liar(payload: In) -> Out:
    return {"doubled": "not a number"}


@wfops.node
def stuck(payload: In) -> Out:
    STARTED.set()
    RELEASE.wait()
    return Out(doubled=0)
'''

FILES = {
    "sources.yaml": "sources:\n  calc: {kind: python, module: calcops}\n",
    "calcops.py": OPS,
    "workflows/twice.yaml": """
        name: twice
        input: {type: object, required: [n], properties: {n: {type: integer}}}
        state: {out: {type: object}}
        output: {doubled: $state.out.doubled}
        steps:
          - id: one
            uses: calc.double
            with: {n: $input.n}
            save: state.out
            next: end
    """,
    "workflows/lies.yaml": """
        name: lies
        steps:
          - id: one
            uses: calc.liar
            with: {n: 1}
            next: end
    """,
    "workflows/hangs.yaml": """
        name: hangs
        steps:
          - id: one
            uses: calc.stuck
            with: {n: 1}
            timeout: 0.5
            next: end
    """,
    "workflows/ask.yaml": """
        name: ask
        steps:
          - id: q
            interrupt: approval
            request: {question: "ok?"}
            resume_schema: {type: object, properties: {v: {type: number}}}
            on: {approved: end}
    """,
    "deployments/twice.local.yaml": "name: twice.local\nworkflow: twice\ninput: {n: 21}\n",
    "deployments/lies.local.yaml": "name: lies.local\nworkflow: lies\n",
    "deployments/hangs.local.yaml": "name: hangs.local\nworkflow: hangs\n",
    "deployments/ask.local.yaml": "name: ask.local\nworkflow: ask\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A compiled project (wfops.lock written), its store inside it."""
    import wfops

    project = write(tmp_path / "proj", FILES)
    assert wfops.Project(project).compile().written
    return project


@pytest.fixture
def released():
    """Releases every stuck node when the test ends, so no thread outlives it."""
    events: list[threading.Event] = []
    yield events
    for event in events:
        event.set()
