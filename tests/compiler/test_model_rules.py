"""validate keeps the workflow model's rules: writes that can meet in one field no reducer
merges are errors (parallel branches, foreach items through `save_each`); saves that may
write nothing into a field with no default are warnings (an optional output field, a
conditional branch); typed `retry`/`catch` and `when:` are checked like the rest."""

from __future__ import annotations

from pathlib import Path

from wfops.compiler.validate import validate_project
from wfops.diagnostics import Diagnostic


def found(root: Path, code: str) -> list[Diagnostic]:
    return [d for d in validate_project(root).diagnostics if d.code == code]


def forked(reducer: str, first: str = "state.last", second: str = "state.last", when: str = "") -> str:
    return f"""
name: fork
state:
  last: {{reducer: {reducer}}}
  o: {{type: object}}
steps:
  - id: par
    parallel:
      a:
        - {{id: a1, uses: std.echo, with: {{value: 1}}, save: {first}, next: end}}
      b:
        - {{id: b0, uses: std.echo, with: {{value: 1}}, next: b1}}
        - {{id: b1, uses: std.echo, with: {{value: 2}}, save: {second}, next: end}}
{when}    next: end
"""


def test_two_branches_saving_one_replace_field_are_an_error_at_the_second_writer(project) -> None:
    root = project({"workflows/fork.yaml": forked("replace")})
    [d] = found(root, "concurrent-write")
    assert (d.severity, d.line, d.step) == ("error", 12, "par")
    assert "branches `a` and `b` of parallel step `par`" in d.message and "`replace`" in d.message
    assert "append" in (d.hint or "")


def test_merging_reducers_and_different_keys_pass_and_the_same_key_does_not(project) -> None:
    assert found(project({"workflows/fork.yaml": forked("append")}), "concurrent-write") == []
    assert found(project({"workflows/fork.yaml": forked("add")}), "concurrent-write") == []
    assert found(project({"workflows/fork.yaml": forked("replace", "state.o.x", "state.o.y")}),
                 "concurrent-write") == []
    [d] = found(project({"workflows/fork.yaml": forked("replace", "state.o.x", "state.o.x")}), "concurrent-write")
    assert "overlap" in d.message


def test_a_conditional_branch_still_counts_as_a_writer_and_its_write_may_be_absent(project) -> None:
    when = "    when: {b: {eq: [$input.go, true]}}\n"
    root = project({"workflows/fork.yaml": forked("replace", when=when)})
    assert len(found(root, "concurrent-write")) == 1
    assert found(root, "optional-save") == []  # branch a writes `last` whenever the step runs
    root = project({"workflows/fork.yaml": forked("replace", "state.last", "state.o", when=when)})
    [d] = found(root, "optional-save")
    assert (d.severity, d.line) == ("warning", 12) and "conditional branch" in d.message
    assert "default" in (d.hint or "")


def test_a_when_that_names_no_branch_is_invalid(project) -> None:
    root = project({"workflows/fork.yaml": forked("append", when="    when: {c: {eq: [1, 1]}}\n")})
    [d] = found(root, "invalid-parallel")
    assert "`c`" in d.message


FAN = """
name: fan
input: {type: object, properties: {items: {type: array}}}
state: {x: {reducer: REDUCER}}
steps:
  - id: each
    foreach: $input.items
    uses: std.echo
    with: {value: $item}
    save_each: state.x
    next: end
"""


def test_foreach_items_saving_each_into_a_replace_field_are_an_error(project) -> None:
    [d] = found(project({"workflows/fan.yaml": FAN.replace("REDUCER", "replace")}), "concurrent-write")
    assert (d.line, d.step) == (9, "each") and "every item of foreach step `each`" in d.message
    assert found(project({"workflows/fan.yaml": FAN.replace("REDUCER", "append")}), "concurrent-write") == []


ASK = """
name: ask
state:
  who: {type: string}
  note: {type: string, default: ""}
steps:
  - id: ask
    interrupt: approval
    resume_schema: {type: object, properties: {who: {type: string}, note: {type: string}, by: {type: string}},
                    required: [by]}
    save: {who: state.who, note: state.note, by: state.who2}
    on: {approved: end}
"""


def test_a_save_of_an_optional_output_field_into_a_field_without_default_is_a_warning(project) -> None:
    root = project({"workflows/ask.yaml": ASK.replace("by: state.who2", "by: state.who")})
    warned = found(root, "optional-save")
    assert [(d.severity, d.line, d.column) for d in warned] == [("warning", 10, 17)]  # `who`: `note` has a default
    assert "output `who`" in warned[0].message and "`default:`" in (warned[0].hint or "")


TYPED = """
name: typed
state: {err: {}}
steps:
  - id: s
    uses: std.echo
    with: {value: 1}
    retry: {attempts: 3, on: [Timeout, CallFailed], max_delay: 2, jitter: full}
    catch:
      - {errors: [Timeout], next: slow}
      - {next: broken, save: state.err}
    next: end
  - {id: slow, end: slow}
  - {id: broken, end: broken}
"""


def test_typed_retry_and_catch_lists_validate_and_their_targets_are_checked(project) -> None:
    assert validate_project(project({"workflows/typed.yaml": TYPED})).diagnostics == []
    root = project({"workflows/typed.yaml": TYPED.replace("next: slow}", "next: slwo}")})
    [d] = found(root, "unknown-target")
    assert d.line == 9 and "`slwo`" in d.message
    root = project({"workflows/typed.yaml": TYPED.replace("jitter: full", "jitter: some")})
    [d] = found(root, "invalid-value")
    assert d.line == 7


NAMED = """
name: named
input: {type: object, properties: {docs: {type: array, items: {type: object, properties: {n: {type: integer}}}}}}
state: {x: {reducer: append}}
steps:
  - id: each
    foreach: $input.docs
    as: doc
    uses: std.format
    with: {template: "{n}", values: {n: $doc.n}}
    save_each: {text: state.x}
    next: after
  - {id: after, uses: std.echo, with: {value: $doc}, next: end}
"""


def test_foreach_as_names_the_item_in_with_and_nowhere_else(project) -> None:
    root = project({"workflows/named.yaml": NAMED})
    diagnostics = validate_project(root).diagnostics
    assert [(d.code, d.line) for d in diagnostics] == [("invalid-path", 12)]  # `$doc` outside the foreach
    [d] = found(project({"workflows/named.yaml": NAMED.replace("as: doc", "as: state")}), "invalid-foreach")
    assert "`$state`" in d.message
    typed = NAMED.replace('{template: "{n}", values: {n: $doc.n}}', "{template: $doc.n, values: {}}")
    [d] = found(project({"workflows/named.yaml": typed}), "type-mismatch")
    assert "`$item.n`" in d.message or "`$doc.n`" in d.message


def test_a_when_condition_is_checked_like_an_if(project) -> None:
    when = "    when: {b: {gt: [$state.last, 1]}, a: {exists: $state.lats}}\n"
    root = project({"workflows/fork.yaml": forked("append", when=when).replace("last: {reducer: append}",
                                                                                 "last: {type: string, reducer: append}")})
    diagnostics = validate_project(root).diagnostics
    assert {d.code for d in diagnostics} >= {"type-mismatch", "unknown-state-field"}
    assert all(d.line == 13 for d in diagnostics if d.code in ("type-mismatch", "unknown-state-field"))
