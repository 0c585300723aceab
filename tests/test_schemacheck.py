"""The plain-schema shortcut never accepts what jsonschema rejects, and its verdicts match."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from wfops.schemacheck import _compile_plain, _plainly_valid, first_error

TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 1.5, -0.0]) | st.sampled_from(["a", "b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=8,
)


def schemas() -> st.SearchStrategy[Any]:
    leaf = st.booleans() | st.builds(lambda t: {"type": t}, st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2))

    def node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.fixed_dictionaries({}, optional={
            "type": st.sampled_from(TYPES),
            "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
            "items": inner,
            "additionalProperties": inner,
            "description": st.just("d"),
            "minimum": st.just(0),  # not plain: always left to jsonschema
        })

    return st.recursive(leaf, node, max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(schemas(), json_values)
def test_the_shortcut_never_accepts_what_jsonschema_rejects(schema: Any, value: Any) -> None:
    valid = Draft202012Validator(schema).is_valid(value)
    if _plainly_valid(schema, value):
        assert valid
    if isinstance(schema, dict) and schema:
        assert (first_error(schema, value) is None) == valid


@settings(max_examples=400, deadline=None)
@given(schemas(), json_values)
def test_the_compiled_shortcut_decides_as_the_shortcut(schema: Any, value: Any) -> None:
    # first_error asks a schema's compiled form (built once per schema), never the walk itself.
    assert _compile_plain(schema, 0)(value) == _plainly_valid(schema, value)
    assert _compile_plain(schema, 31)(value) == _plainly_valid(schema, value)  # past the depth: the walk


def test_plain_cases() -> None:
    schema = {"type": "object", "required": ["value"], "properties": {"value": {"type": "integer"}},
              "additionalProperties": False}
    assert _plainly_valid(schema, {"value": 2}) and _plainly_valid(schema, {"value": 2.0})
    assert not _plainly_valid(schema, {"value": True}) and not _plainly_valid(schema, {"value": 1, "x": 1})
    assert not _plainly_valid({"type": "string", "minLength": 1}, "a")  # not plain: jsonschema decides
    assert first_error(schema, {"value": "x"}) is not None
