"""What keeps `validate`'s memory flat: positions from packed marks, loaded mappings shared
with the objects built from them, step fields read without giving each step its own dict."""

from __future__ import annotations

import gc

from wfops.loader.project import load_document
from wfops.loader.yaml import load_yaml_text

WORKFLOW = """\
name: compact
state: {value: {type: integer}}
steps:
  - id: first
    uses: std.echo
    with: {value: 1, nested: {deep: [1, {x: 2}]}}
    save: {value: state.value}
    next: last
  - {id: last, end: ok}
"""


def test_positions_are_made_from_the_marks_without_parsing_again() -> None:
    doc = load_yaml_text(WORKFLOW, "w.yaml")
    assert doc._marks is not None and doc._positions is None  # nothing is made until asked
    assert doc.at(("steps", 0, "with", "nested", "deep", 1, "x")) == (6, 45)
    assert doc.at(("steps", 0, "save"), key=True) == (7, 5)
    assert doc.at(("steps", 1, "end")) == (9, 21)
    assert doc.at(("steps", 1, "missing", "deeper")) == (9, 5)  # the deepest node that exists
    assert doc.at(("steps", 0, "with", "value"), key=True) == (6, 12)
    assert doc._positions is None  # a few lookups walk the data and keep no table
    asked = [(("steps", 0, "with", "nested", "deep", i), key) for i in range(3) for key in (False, True)]
    walked = [doc.at(path, key=key) for path, key in asked * 3]
    assert doc._positions is not None and doc._marks is None  # many: the tables, made once
    assert [doc.at(path, key=key) for path, key in asked * 3] == walked
    assert walked[:6] == [(6, 38), (6, 31), (6, 41), (6, 31), (6, 37), (6, 31)]


def test_a_loaded_files_mappings_are_kept_not_copied() -> None:
    doc = load_yaml_text(WORKFLOW, "w.yaml")
    model, found = load_document(doc, "workflow")
    assert found == [] and model is not None
    step = model.steps[0]
    assert step.with_ is doc.data["steps"][0]["with"]
    assert step.save is doc.data["steps"][0]["save"]


def test_step_fields_are_the_instance_fields_only() -> None:
    model, _ = load_document(load_yaml_text(WORKFLOW, "w.yaml"), "workflow")
    assert model is not None
    call, end = model.steps
    shared = gc.get_referents(call)  # the values themselves while no `__dict__` was made
    # As the checks read them (tests/compiler/test_step_fields.py: no class attribute shadows one).
    assert getattr(call, "uses", None) == "std.echo" and hasattr(call, "with_")
    assert getattr(call, "next", None) == "last"
    assert getattr(call, "foreach", None) is None and not hasattr(call, "foreach")
    # Reading the fields did not give the step its own dict (100,000 of them at scale).
    assert gc.get_referents(call) == shared
    assert not hasattr(end, "uses") and getattr(end, "uses", "none") == "none"
