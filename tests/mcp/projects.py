"""Small std-only projects for the `wfops mcp` server tests."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write

HELLO = """
name: hello
input: {type: object, required: [who], properties: {who: {type: string}}}
state:
  greeting: {type: string}
output: {greeting: $state.greeting}
steps:
  - id: greet
    uses: std.format
    with: {template: "hello {who}", values: {who: $input.who}}
    save: {text: state.greeting}
    next: shout
  - id: shout
    uses: std.echo
    with: {value: $state.greeting}
    next: end
"""

ASK = """
name: ask
state:
  answer: {type: object}
output: {answer: $state.answer}
steps:
  - id: question
    interrupt: approval
    request: {question: "Ship it?"}
    resume_schema: {type: object, required: [by], properties: {by: {type: string}}}
    save: state.answer
    on: {approved: end, rejected: no}
  - {id: no, end: rejected}
"""

BROKEN_WORKFLOW = """\
name: broken
steps:
  - id: first
    uses: std.echo
    with: {value: 1}
    next: nowhere
"""


def std_project(root: Path) -> Path:
    return write(root, {
        "sources.yaml": "sources: {}\n",
        "workflows/hello.yaml": HELLO,
        "workflows/ask.yaml": ASK,
        "deployments/hello.yaml": "name: hello.local\nworkflow: hello\ninput: {who: world}\n",
        "deployments/ask.yaml": "name: ask.local\nworkflow: ask\n",
    })
