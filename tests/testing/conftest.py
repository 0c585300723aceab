"""A small project with a python source and workflows for every step kind, compiled."""

from __future__ import annotations

from pathlib import Path

import pytest

import wfops
from tests.conftest import write

NODES = '''
from pydantic import BaseModel

import wfops


class In(BaseModel):
    q: str


class Value(BaseModel):
    value: int


@wfops.node
def fetch(payload: In) -> Value:
    """Fetch a value (the tests never reach it unmocked)."""
    raise RuntimeError("the network")


@wfops.node(outcomes=["ok", "big"])
def classify(payload: Value) -> wfops.Result[Value]:
    """Sort a value."""
    return wfops.Result(outcome="big" if payload.value > 10 else "ok", output=payload)
'''

FILES = {
    "sources.yaml": """
        sources:
          nodes: {kind: python, module: wfnodes}
        """,
    "wfnodes.py": NODES,
    "workflows/main.yaml": """
        name: main
        input: {type: object, properties: {q: {type: string}}}
        state:
          value: {type: integer}
          err: {type: object}
        output: {value: $state.value}
        steps:
          - id: fetch
            uses: nodes.fetch
            with: {q: $input.q}
            retry: {attempts: 3, backoff: 0}
            save: {value: state.value}
            catch: {next: fallback, save: state.err}
            next: classify
          - id: classify
            uses: nodes.classify
            with: {value: $state.value}
            on: {ok: end, big: big}
          - id: big
            end: big
          - id: fallback
            uses: std.format
            with: {template: "fallback", values: {}}
            next: failed_over
          - id: failed_over
            end: fallback
        """,
    "workflows/ask.yaml": """
        name: ask
        state: {answer: {type: object}}
        output: {by: $state.answer.by}
        steps:
          - id: approve
            interrupt: approval
            request: {question: is it ok}
            resume_schema: {type: object, required: [by], properties: {by: {type: string}}}
            save: state.answer
            on: {yes: end, no: refused}
          - id: refused
            end: refused
        """,
    "workflows/fan.yaml": """
        name: fan
        input: {type: object, properties: {qs: {type: array}}}
        state: {values: {type: array}}
        output: {values: $state.values}
        steps:
          - id: each
            foreach: $input.qs
            uses: nodes.fetch
            with: {q: $item}
            save: {value: state.values}
            next: end
        """,
    "workflows/outer.yaml": """
        name: outer
        state: {got: {type: object}}
        output: {got: $state.got}
        steps:
          - id: sub
            workflow: main
            with: {q: inner}
            save: state.got
            on: {ok: end, big: end, fallback: end}
        """,
}


@pytest.fixture
def project(make_project) -> Path:
    root = make_project(FILES)
    report = wfops.Project(root).compile()
    assert report.written, [d.message for d in report.diagnostics]
    return root


def add_test(root: Path, text: str, name: str = "tests/t.wftest.yaml") -> Path:
    write(root, {name: text})
    return root / name
