"""Acceptance: every finding points at the offending YAML node, 1-based, in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import CliResult, run_cli


def validate(root: Path, *args: str) -> CliResult:
    done = run_cli("validate", *args, cwd=root)
    assert "Traceback" not in done.stderr
    return done


def findings(root: Path) -> list[tuple[str, int, int]]:
    done = validate(root, "--format", "json")
    return [(d["code"], d["line"], d["column"]) for d in json.loads(done.stdout)["diagnostics"]]


NESTED = """\
name: w
steps:
  - id: a
    if:
      and:
        - exists: $input.x
        - or:
            - eq: [1, 2]
            - {cond}
    then: end
    else: end
"""


@pytest.mark.parametrize(("cond", "column"), [
    ("eq: [1]", 19),             # the operand list of the broken `eq`
    ("exists: 3", 23),           # the operand of `exists`
    ('exists: "$$x"', 23),       # a literal, not a path
    ("{bogus: [1, 2]}", 15),     # the condition mapping with the unknown operator
    ("not: {gt: 1}", 25),        # the operand of the `gt` inside `not`
])
def test_invalid_condition_points_at_the_nested_condition(tmp_path: Path, cond: str, column: int) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": NESTED.replace("{cond}", cond)})
    assert findings(root) == [("invalid-condition", 9, column)]


def test_same_position_in_text_github_and_sarif(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": NESTED.replace("{cond}", "eq: [1]")})
    text = validate(root)
    assert text.returncode == 1
    assert text.stdout.startswith("workflows/w.yaml:9:19: error[invalid-condition] ")
    assert "\n  hint: " in text.stdout
    github = validate(root, "--format", "github")
    assert github.stdout.startswith("::error file=workflows/w.yaml,line=9,col=19,title=wfops invalid-condition::")
    sarif = json.loads(validate(root, "--format", "sarif").stdout)
    result = sarif["runs"][0]["results"][0]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (result["ruleId"], result["level"], region["startLine"], region["startColumn"]) == (
        "invalid-condition", "error", 9, 19)


MESSAGES = """\
name: w
state:
  words: {type: array, reducer: extend}
steps:
  - id: a
    uses: std.format
    with: {template: "{x}", values: {x: $item}}
    save: {text: state.words}
    next: b
  - id: b
    uses: std.format
    with: {template: "x", values: {}}
    save: {text: state.markdown}
    next: end
"""


def test_messages_and_hints_read_as_a_person_wrote_them(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/w.yaml": MESSAGES})
    found = json.loads(validate(root, "--format", "json").stdout)["diagnostics"]
    by_code = {d["code"]: d for d in found}
    assert set(by_code) == {"path-not-allowed", "type-mismatch", "unknown-state-field"}
    assert by_code["path-not-allowed"]["message"] == (
        "`$item` is only defined inside a foreach step's `with`, not in the `with` of a step that is not a foreach")
    assert (by_code["path-not-allowed"]["line"], by_code["path-not-allowed"]["column"]) == (7, 41)
    assert by_code["type-mismatch"]["hint"] == "save array here, or change the field's reducer"
    # The saved value is a string: the hint must not suggest `{type: object}`.
    assert "{type: object}" not in by_code["unknown-state-field"]["hint"]
    assert (by_code["unknown-state-field"]["line"], by_code["unknown-state-field"]["column"]) == (13, 18)


def test_project_discovery_from_a_subdirectory_and_project_flag(tmp_path: Path) -> None:
    root = write(tmp_path / "proj", {"sources.yaml": "sources: {}\n",
                                     "workflows/w.yaml": NESTED.replace("{cond}", "eq: [1]")})
    below = validate(root / "workflows")
    assert below.returncode == 1 and below.stdout.startswith("workflows/w.yaml:9:19:")
    elsewhere = validate(tmp_path, "--project", "proj")
    assert elsewhere.returncode == 1 and elsewhere.stdout.startswith("workflows/w.yaml:9:19:")
    first = run_cli("--project", "proj", "validate", cwd=tmp_path)  # as `git -C DIR`
    assert first.returncode == 1 and first.stdout.startswith("workflows/w.yaml:9:19:")
    wrong = validate(tmp_path, "--project", "proj/workflows")  # no sources.yaml there: not "ok"
    assert (wrong.returncode, wrong.stdout) == (2, "")
    assert wrong.stderr.startswith("wfops: error: --project proj/workflows: not a wfops project")
    file = validate(tmp_path, "--project", "proj/sources.yaml")
    assert file.returncode == 2 and "not a directory" in file.stderr
    nowhere = validate(tmp_path)
    assert nowhere.returncode == 2 and nowhere.stderr.startswith("wfops: error: no wfops project here")
