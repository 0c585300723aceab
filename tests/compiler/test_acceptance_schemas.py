"""Acceptance: embedded JSON Schemas a run could not use are found by `wfops validate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import run_cli

WORKFLOW = """\
name: w
input: {input}
steps:
  - {{id: a, uses: std.echo, with: {{value: $input.a}}, next: end}}
"""


def validate(root: Path) -> list[tuple[str, int, int, str]]:
    done = run_cli("validate", "--format", "json", cwd=root)
    assert "Traceback" not in done.stderr
    return [(d["code"], d["line"], d["column"], d["message"]) for d in json.loads(done.stdout)["diagnostics"]]


@pytest.mark.parametrize(("schema", "words"), [
    ('{type: object, properties: {a: {$ref: "#/nope"}}}', "points to nothing"),
    ('{type: object, properties: {a: {$ref: "#/$defs/y"}}, $defs: {x: {}}}', "points to nothing"),
    ('{type: object, properties: {a: {$ref: "https://example.com/a.json"}}}', "does not fetch"),
])
def test_dangling_ref_is_invalid_schema_at_the_ref(tmp_path: Path, schema: str, words: str) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW.format(input=schema)})
    [(code, line, column, message)] = validate(root)
    assert (code, line, column) == ("invalid-schema", 2, 46)
    assert words in message


@pytest.mark.parametrize("schema", [
    '{type: object, properties: {a: {$ref: "#/$defs/x"}}, $defs: {x: {type: integer}}}',
    '{type: object, properties: {a: {$ref: "#/properties/b"}, b: {type: string}}}',
    '{type: object, properties: {a: {enum: [{$ref: "not a reference, data"}]}}}',
])
def test_refs_that_resolve_pass(tmp_path: Path, schema: str) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW.format(input=schema)})
    assert validate(root) == []
