"""Acceptance: conditions are structured and type-checked gradually."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import run_cli

WORKFLOW = """\
name: w
input:
  type: object
  properties: {{n: {{type: integer}}, s: {{type: string}}, b: {{type: boolean}}, l: {{type: array}}, u: {{}}}}
steps:
  - id: branch
    if: {cond}
    then: end
    else: end
"""


def validate(root: Path) -> list[tuple[str, str, int, int, str]]:
    done = run_cli("validate", "--format", "json", cwd=root)
    assert "Traceback" not in done.stderr
    return [(d["severity"], d["code"], d["line"], d["column"], d["message"])
            for d in json.loads(done.stdout)["diagnostics"]]


@pytest.mark.parametrize(("cond", "words"), [
    ('{gt: [$input.n, "5"]}', "always false"),        # a quoted number is a string
    ('{lt: [$input.s, 3]}', "always false"),
    ('{in: [$input.n, $input.s]}', "not a list"),
    ("{in: [1, 2]}", "not a list"),
    ('{eq: [$input.n, "5"]}', "always false"),
    ("{ne: [$input.b, 1]}", "always true"),           # JSON equality: true is not 1
])
def test_operands_that_can_never_compare_are_type_mismatch(tmp_path: Path, cond: str, words: str) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW.format(cond=cond)})
    [(severity, code, line, column, message)] = validate(root)
    assert (severity, code, line, column) == ("error", "type-mismatch", 7, 14)
    assert words in message


@pytest.mark.parametrize("cond", [
    "{gt: [$input.n, 5]}", '{ge: [$input.s, "b"]}', "{eq: [$input.n, 5.0]}", "{eq: [$input.n, null]}",
    "{in: [$input.n, [1, 2]]}", "{in: [$input.n, $input.l]}", '{eq: [$input.u, "any"]}',
    "{exists: $input.n}", '{eq: [$input.s, "$$literal"]}',
])
def test_comparable_or_unknown_operands_pass(tmp_path: Path, cond: str) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW.format(cond=cond)})
    assert validate(root) == []


def test_nested_mismatch_is_reported_at_its_operands(tmp_path: Path) -> None:
    cond = "{and: [{exists: $input.n}, {not: {lt: [$input.s, 1]}}]}"
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW.format(cond=cond)})
    [(_, code, line, column, message)] = validate(root)
    assert (code, line, column) == ("type-mismatch", 7, 47)
    assert message.startswith("`lt: [$input.s, 1]` compares string with integer")


@pytest.mark.parametrize("foreach", ["$$x", "$", "names"])
def test_foreach_needs_a_path_not_a_literal(tmp_path: Path, foreach: str) -> None:
    workflow = ("name: w\ninput: {type: object, properties: {names: {type: array}}}\nsteps:\n  - id: a\n"
                f'    foreach: "{foreach}"\n    uses: std.echo\n    with: {{value: $item}}\n    next: end\n')
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": workflow})
    [(severity, code, line, column, message)] = validate(root)
    assert (severity, code, line, column) == ("error", "invalid-value", 5, 14)
    assert "is not a valid path" in message
