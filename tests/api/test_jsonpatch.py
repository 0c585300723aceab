"""RFC 6902 JSON Patch over a YAML round-trip document: the RFC's semantics, comments kept."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import finishes
from wfops.api.authoring import patched_text
from wfops.api.jsonpatch import MAX_OPS, PatchError, apply_patch
from wfops.loader.yaml import MAX_FILE_BYTES as MAX_RESULT_BYTES


def patch(doc: Any, *ops: dict[str, Any]) -> Any:
    return apply_patch(doc, list(ops))


def test_the_rfc_operations() -> None:
    assert patch({"foo": "bar"}, {"op": "add", "path": "/baz", "value": "qux"}) == {"foo": "bar", "baz": "qux"}
    assert patch({"foo": ["bar", "baz"]}, {"op": "add", "path": "/foo/1", "value": "qux"}) == \
        {"foo": ["bar", "qux", "baz"]}
    assert patch({"foo": [1]}, {"op": "add", "path": "/foo/-", "value": 2}) == {"foo": [1, 2]}
    assert patch({"baz": "qux", "foo": "bar"}, {"op": "remove", "path": "/baz"}) == {"foo": "bar"}
    assert patch({"foo": ["bar", "qux", "baz"]}, {"op": "remove", "path": "/foo/1"}) == {"foo": ["bar", "baz"]}
    assert patch({"baz": "qux"}, {"op": "replace", "path": "/baz", "value": "boo"}) == {"baz": "boo"}
    assert patch({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
                 {"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}) == \
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}
    assert patch({"foo": ["all", "grass", "cows", "eat"]}, {"op": "move", "from": "/foo/1", "path": "/foo/3"}) == \
        {"foo": ["all", "cows", "eat", "grass"]}
    copied = patch({"a": {"b": [1]}}, {"op": "copy", "from": "/a", "path": "/c"})
    copied["c"]["b"].append(2)
    assert copied == {"a": {"b": [1]}, "c": {"b": [1, 2]}}  # a deep copy
    assert patch({"/": 1, "~": 2}, {"op": "replace", "path": "/~1", "value": 3},
                 {"op": "replace", "path": "/~0", "value": 4}) == {"/": 3, "~": 4}
    assert patch({"a": 1}, {"op": "replace", "path": "", "value": [1]}) == [1]
    assert patch({"a": [1, {"b": True}]}, {"op": "test", "path": "/a", "value": [1.0, {"b": True}]}) == \
        {"a": [1, {"b": True}]}


@pytest.mark.parametrize(("ops", "message"), [
    ([{"op": "remove", "path": "/nope"}], "patch op #0 (remove '/nope'): no member 'nope'"),
    ([{"op": "add", "path": "/a/5", "value": 1}], "patch op #0 (add '/a/5'): index 5 is out of range"),
    ([{"op": "add", "path": "/a/01", "value": 1}], "is not an array index"),
    ([{"op": "replace", "path": "a", "value": 1}], "must start with '/'"),
    ([{"op": "test", "path": "/a/0", "value": True}], "test failed"),
    ([{"op": "add", "path": "/a"}], "`value` is missing"),
    ([{"op": "move", "path": "/a/0"}], "`from` is missing"),
    ([{"op": "move", "from": "/a", "path": "/a/0"}], "into itself"),
    ([{"op": "frob", "path": "/a"}], "unknown op 'frob'"),
    ([{"path": "/a"}], "unknown op None"),
    ({"op": "add"}, "must be an array"),
])
def test_failures_name_the_op(ops: Any, message: str) -> None:
    with pytest.raises(PatchError, match=None) as caught:
        apply_patch({"a": [1]}, ops)
    assert message in caught.value.message


WORKFLOW = """\
# header comment
name: w   # the name
steps:
- id: a          # first
  uses: std.echo
  with: {value: "quoted"}
  next: end
"""


def test_comments_quotes_and_indentation_are_kept() -> None:
    out = patched_text(WORKFLOW, [{"op": "replace", "path": "/steps/0/next", "value": "b"},
                                  {"op": "add", "path": "/steps/-", "value": {"id": "b", "uses": "std.echo",
                                                                            "with": {"value": 2}, "next": "end"}}],
                       "w.yaml")
    assert out.startswith("# header comment\nname: w   # the name\nsteps:\n- id: a          # first\n")
    assert 'with: {value: "quoted"}' in out and "  next: b\n- id: b\n  uses: std.echo\n" in out


STATE = "name: w\nstate:\n  a: {type: string, description: some text}\n  b: {type: object}\nsteps: []\n"


def test_a_patch_that_doubles_the_document_is_refused_not_run_out_of_memory() -> None:
    bomb = [{"op": "copy", "from": "/state", "path": f"/state/k{i}"} for i in range(21)]
    with pytest.raises(PatchError) as caught:
        finishes(lambda: patched_text(STATE, bomb, "workflows/w.yaml"))
    assert caught.value.message.startswith("patch op #")
    assert "bytes of JSON" in caught.value.message or "took more than" in caught.value.message


def test_the_document_may_not_grow_past_the_largest_file_wfops_reads() -> None:
    big = {"text": "x" * (MAX_RESULT_BYTES // 2 + 10)}
    with pytest.raises(PatchError, match=r"patch op #1 \(copy '/again'\): the document would grow to \d+ bytes"):
        apply_patch(big, [{"op": "test", "path": "/text", "value": big["text"]},
                          {"op": "copy", "from": "/text", "path": "/again"}])
    assert "again" not in big  # refused before anything was copied
    with pytest.raises(PatchError, match="would grow"):
        apply_patch({}, [{"op": "add", "path": "/a", "value": "y" * (MAX_RESULT_BYTES + 1)}])
    # Replacing a value by one of the same size is no growth.
    assert apply_patch(dict(big), [{"op": "replace", "path": "/text", "value": "z" * len(big["text"])}])


def test_a_patch_has_at_most_max_ops_operations_and_a_time_limit() -> None:
    with pytest.raises(PatchError, match=f"at most {MAX_OPS} are applied"):
        apply_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 1}] * (MAX_OPS + 1))
    slow = {"items": list(range(100_000))}
    with pytest.raises(PatchError, match=r"took more than .*s and was stopped"):
        finishes(lambda: apply_patch(slow, [{"op": "test", "path": "/items", "value": slow["items"]}] * MAX_OPS))


@pytest.mark.parametrize("pointer", ["/a~2", "/~", "/a/~x", "/~01~"])
def test_an_invalid_pointer_escape_is_a_patch_error(pointer: str) -> None:
    with pytest.raises(PatchError, match="`~` is written `~0`"):
        apply_patch({"a": [1]}, [{"op": "add", "path": pointer, "value": 1}])
    with pytest.raises(PatchError, match="`~` is written `~0`"):
        apply_patch({"a": [1]}, [{"op": "copy", "from": pointer, "path": "/b"}])
