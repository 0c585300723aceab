"""A path written in many places is judged once per kind of place (`check_paths`), and each
place still gets its own finding; a path whose meaning depends on the place is judged there."""

from __future__ import annotations

from pathlib import Path

from wfops.compiler.validate import validate_project

REPEATS = """
name: repeats
input: {type: object, properties: {items: {type: array, items: {type: object, properties: {n: {type: integer}}}}}}
state: {total: {type: integer}}
output: {done: $state.nothing}
steps:
  - id: first
    uses: std.echo
    with: {value: [$state.nothing, $input.nope, $index]}
    next: each
  - id: each
    foreach: $input.items
    uses: std.echo
    with: {value: [$state.nothing, $input.nope, $index, $item.n, $item.m]}
    next: again
  - id: again
    uses: std.echo
    with: {value: {a: $state.nothing, b: $input.nope, c: $item}}
    next: end
"""


def test_each_place_of_a_repeated_path_gets_its_own_finding(tmp_path: Path) -> None:
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "repeats.yaml").write_text(REPEATS)
    found = [(d.code, d.line, d.column, d.severity, d.message) for d in validate_project(tmp_path).diagnostics
             if d.code in ("unknown-state-field", "undeclared-input", "path-not-allowed")]
    nothing = "`$state.nothing` reads state field `nothing`, which `state:` does not declare"
    nope = ("`$input.nope` reads input `nope`, which the `input` schema does not declare (it is null unless a "
            "run passes it)")
    outside = "only defined inside a foreach step's `with`, not in the `with` of a step that is not a foreach"
    assert found == [
        ("unknown-state-field", 5, 16, "error", nothing),  # output
        ("unknown-state-field", 9, 20, "error", nothing),
        ("undeclared-input", 9, 36, "warning", nope),
        ("path-not-allowed", 9, 49, "error", f"`$index` is {outside}"),
        ("unknown-state-field", 14, 20, "error", nothing),
        ("undeclared-input", 14, 36, "warning", nope),  # `$index` is allowed inside the foreach
        ("unknown-state-field", 18, 23, "error", nothing),
        ("undeclared-input", 18, 42, "warning", nope),
        ("path-not-allowed", 18, 58, "error", f"`$item` is {outside}"),
    ]


CHILD = """
name: child
input: {type: object, properties: {n: {type: integer}}}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: only, end: ok}
"""
PARENT = """
name: parent
input:
  type: object
  properties:
    xs: {type: array, items: {type: string}}
    ys: {type: array, items: {type: integer}}
    name: {type: string}
state: {label: {type: string}, many: {type: array, reducer: append}}
steps:
  - id: strings
    foreach: $input.xs
    workflow: child
    with: {n: $item}
    next: numbers
  - id: numbers
    foreach: $input.ys
    workflow: child
    with: {n: $item}
    next: once
  - id: once
    workflow: child
    with: {n: $input.name}
    save: {n: state.label}
    next: twice
  - id: twice
    workflow: child
    with: {n: $input.name}
    save: {n: state.label}
    next: end
"""


def test_each_binding_and_save_of_a_repeated_type_error_gets_its_own_finding(tmp_path: Path) -> None:
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "child.yaml").write_text(CHILD)
    (tmp_path / "workflows" / "parent.yaml").write_text(PARENT)
    found = [(d.line, d.column, d.step, d.message) for d in validate_project(tmp_path).diagnostics
             if d.code == "type-mismatch"]
    bound = "input `n` of workflow `child` expects integer, but `{}` is string"
    saved = "`state.label` holds string, but output `n` of workflow `child` gives integer"
    assert found == [
        (14, 15, "strings", bound.format("$item")),  # the item of `xs`; the item of `ys` fits
        (23, 15, "once", bound.format("$input.name")),
        (24, 15, "once", saved),
        (28, 15, "twice", bound.format("$input.name")),
        (29, 15, "twice", saved),
    ]
