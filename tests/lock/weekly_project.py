"""The documented example workflow (weekly-report), verbatim but for the `markdown` state
field the documented text leaves undeclared, with a python source implementing
notes.read_notes / extract_report / render_markdown_report and the
deployment. Shared by the acceptance tests of the compiler and the lock."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write

OPS = '''
"""Meeting notes -> report -> Markdown."""
from pydantic import BaseModel, Field

import wfops


class ReadIn(BaseModel):
    path: str = Field(description="Notes file, relative to the project root.")


class ReadOut(BaseModel):
    text: str


class ExtractIn(BaseModel):
    text: str


class Report(BaseModel):
    title: str
    items: list[str] = []


class RenderIn(BaseModel):
    report: Report


class RenderOut(BaseModel):
    markdown: str


@wfops.node
def read_notes(payload: ReadIn) -> ReadOut:
    """Read the notes file."""
    with open(payload.path, encoding="utf-8") as handle:
        return ReadOut(text=handle.read())


@wfops.node(outcomes=["ok", "empty"])
async def extract_report(payload: ExtractIn) -> wfops.Result[Report]:
    """Extract a report: the first line is the title, the others are items."""
    lines = [line for line in payload.text.splitlines() if line.strip()]
    if not lines:
        return wfops.Result(outcome="empty")
    return Report(title=lines[0], items=lines[1:])


@wfops.node
def render_markdown_report(payload: RenderIn) -> RenderOut:
    items = "".join(f"\\n- {item}" for item in payload.report.items)
    return RenderOut(markdown=f"# {payload.report.title}{items}")
'''

WORKFLOW = """
name: weekly-report            # unique in the project; [a-z0-9][a-z0-9_.-]*
version: 1                     # optional human label
description: Turn meeting notes into a report.
input:                         # JSON Schema (draft 2020-12) of the run input
  type: object
  required: [path]
  properties: {path: {type: string}}
state:                         # typed workflow memory: field -> JSON Schema + reducer
  text: {type: string}
  report: {type: object}
  markdown: {type: string}
  log: {type: array, reducer: append}
output:                        # final output = projection of paths
  report: $state.report
  markdown: $state.markdown
start: read                    # optional; default: the first step
steps:
  - id: read
    uses: notes.read_notes     # <logical source>.<capability>
    with: {path: $input.path}  # node input, built only from these bindings
    save: {text: state.text}   # node output field -> state path
    next: extract              # shorthand for  on: {ok: extract}
  - id: extract
    uses: notes.extract_report
    with: {text: $state.text}
    save: state.report         # a bare string saves the whole output there
    on: {ok: render, empty: nothing}
    retry: {attempts: 3, backoff: 0.5}   # exponential; failures only, never outcomes
    timeout: 30                          # seconds
  - id: render
    uses: notes.render_markdown_report
    with: {report: $state.report}
    save: {markdown: state.markdown}
    next: end                  # `end` finishes the workflow with outcome ok
  - id: nothing
    end: empty                 # an end step sets a non-ok workflow outcome
"""

FILES = {
    "sources.yaml": """
        sources:
          report:                                   # concrete source id
            kind: python
            module: weekly.ops                      # importable relative to the project root
        """,
    "weekly/__init__.py": "",
    "weekly/ops.py": OPS,
    "workflows/weekly-report.yaml": WORKFLOW,
    "deployments/weekly-report.local.yaml": """
        name: weekly-report.local
        workflow: weekly-report        # or weekly-report@sha256:<prefix> to pin an artifact
        bindings: {notes: report}      # logical source -> concrete source id
        drift: fail                    # fail | warn : what a run does when sources drifted
        input: {path: notes.md}        # defaults, merged under CLI input
        """,
    "notes.md": "Weekly sync\nship v1\nwrite docs\n",
}


def weekly_project(root: Path) -> Path:
    return write(root, FILES)
