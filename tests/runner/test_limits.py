"""Limits that fit real projects, and the bounds on hostile input that stay.

A workflow of 20,000 steps in one file and an input of 1,000,000 items validate and run
(slow: seconds of real work each; not traced for coverage, `no_cover`, since the small tests
run the same lines and tracing 20,000 steps multiplies the time several times over). Input files: JSON is read by the C parser up to
`MAX_INPUT_BYTES`; anything it refuses goes through the YAML loader, whose limits and
diagnostics stand (fast)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import wfops
from tests.conftest import write
from wfops.api.inputs import MAX_INPUT_BYTES, read_input_file
from wfops.errors import RefusedError
from wfops.loader.yaml import MAX_FILE_BYTES, MAX_NODES, load_yaml_text

STEPS = 20_000
ITEMS = 1_000_000


def chain(steps: int) -> str:
    lines = ["name: big", "input: {type: object, properties: {value: {type: integer}}}",
             "state: {value: {type: integer}}", "output: {value: $state.value}", "steps:"]
    for i in range(1, steps + 1):
        after = f"s{i + 1}" if i < steps else "end"
        lines.append(f"  - {{id: s{i}, uses: std.echo, with: {{value: $input.value}}, save: {{value: state.value}}, "
                     f"next: {after}}}")
    return "\n".join(lines) + "\n"


def test_the_limits_hold_a_20000_step_workflow() -> None:
    # The loader's bounds are set above what the largest workflow the docs promise needs.
    text = chain(STEPS)
    assert len(text.encode()) < MAX_FILE_BYTES
    nodes = len(load_yaml_text(chain(10), "x").positions) * STEPS // 10  # every node has a position
    assert nodes < MAX_NODES


@pytest.mark.slow  # validates, compiles and runs 20,000 steps
@pytest.mark.no_cover
def test_a_20000_step_workflow_validates_and_runs(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/big.yaml": chain(STEPS),
                            "deployments/big.yaml": "name: big.local\nworkflow: big\ninput: {value: 7}\n"})
    with wfops.Project(root) as project:
        assert project.validate().ok
        assert project.compile().written
        run = project.run("big.local")
        assert (run.status, run.output) == ("completed", {"value": 7})
        assert len(project.trace(run.run_id)) == STEPS


MANY = """
name: many
input: {type: object, required: [items], properties: {items: {type: array, items: {type: object}}}}
state: {first: {type: object}, last: {type: object}}
output: {first: $state.first, last: $state.last}
steps:
  - {id: first, uses: std.echo, with: {value: $input.items.0}, save: {value: state.first}, next: last}
  - {id: last, uses: std.echo, with: {value: "$input.items.999999"}, save: {value: state.last}, next: end}
"""


@pytest.mark.slow  # a 16 MB input file, parsed, checked against the input schema and stored
@pytest.mark.no_cover
def test_an_input_of_a_million_items_runs(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/many.yaml": MANY,
                            "deployments/many.yaml": "name: many.local\nworkflow: many\n"})
    (root / "in.json").write_text(json.dumps({"items": [{"id": i} for i in range(ITEMS)]}))
    given = read_input_file(str(root / "in.json"), "--input-file")
    assert len(given["items"]) == ITEMS
    with wfops.Project(root) as project:
        assert project.compile().written
        run = project.run("many.local", input=given)
        assert (run.status, run.output) == ("completed", {"first": {"id": 0}, "last": {"id": ITEMS - 1}})


def refusal(path: Path) -> tuple[str, int, int]:
    with pytest.raises(RefusedError) as info:
        read_input_file(str(path), "--input-file")
    [d] = info.value.diagnostics
    return d.code, d.line, d.column


def test_json_input_past_the_yaml_limits_is_read(tmp_path: Path) -> None:
    items = list(range(MAX_NODES + 1))  # more nodes, and more bytes, than a YAML file may hold
    (tmp_path / "in.json").write_text(json.dumps({"items": items, "name": "x" * MAX_FILE_BYTES}))
    assert read_input_file(str(tmp_path / "in.json"), "--input-file")["items"] == items


def test_json_that_is_not_strict_is_refused_where_yaml_refuses_it(tmp_path: Path) -> None:
    cases = {"dup.json": ('{"a": 1,\n "a": 2}', ("yaml-duplicate-key", 2, 2)),
             "inf.json": ('{"a": 1e999}', ("yaml-invalid-number", 1, 7)),
             "deep.json": ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", ("yaml-too-deep", 1, 70)),
             "bad.json": (b'{"a": "caf\xe9"}', ("yaml-encoding", 1, 11))}
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        assert refusal(path) == expected, name
    (tmp_path / "nan.json").write_text('{"a": NaN}')  # not JSON; as YAML, a string
    assert read_input_file(str(tmp_path / "nan.json"), "--input-file") == {"a": "NaN"}


def test_yaml_input_keeps_the_yaml_limits(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text("items: []\n" + "#" * MAX_FILE_BYTES + "\n")  # not JSON, and past the YAML file limit
    assert refusal(path) == ("yaml-too-large", 1, 1)


def test_an_input_file_past_its_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: nothing written
    with pytest.raises(RefusedError, match="larger than 67,108,864 bytes"):
        read_input_file(str(path), "--input-file")
