"""Arbitrary schemas, bindings and paths never crash the checks: findings or nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import finishes
from wfops.compiler.standalone import validate_text
from wfops.diagnostics import Diagnostic

KEYWORDS = ["type", "properties", "items", "required", "enum", "anyOf", "oneOf", "allOf", "$ref", "$defs",
            "additionalProperties", "prefixItems", "const", "minimum", "pattern", "reducer"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["string", "integer", "number", "object", "array", "null", "boolean", "#/$defs/a", "#/nope", "#", "[a-",
     "$state.x", "$input.a.0", "$item", "$index", "$secret.T", "$context.run_id", "$$x", "$", "$state..y",
     "append", "add", "merge", "union"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from([*KEYWORDS, "a", "x", "y"]), inner, max_size=4)), max_leaves=12)


def workflow(input_schema, state_schema, with_value, output) -> str:
    doc = {"name": "fuzz", "input": input_schema, "state": {"x": state_schema},
           "output": output, "steps": [
               {"id": "a", "uses": "std.echo", "with": {"value": with_value}, "save": "state.x", "next": "b"},
               {"id": "b", "foreach": "$state.x", "uses": "std.format",
                "with": {"template": with_value, "values": with_value}, "save": {"text": "state.x"},
                "next": "c"},
               {"id": "c", "if": {"eq": [with_value, "$state.x"]}, "then": "d", "else": "end"},
               {"id": "d", "interrupt": "ask", "request": with_value, "resume_schema": input_schema,
                "save": "state.x", "on": {"go": "end"}}]}
    return json.dumps(doc)  # JSON is YAML


@pytest.mark.slow  # hundreds of generated examples
# deadline=None: a per-example time limit is a wall-clock assertion (bench/ measures speed);
# `finishes` keeps a hang guard.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4),
       st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4), values,
       st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=2))
def test_checks_never_crash(input_schema, state_schema, with_value, output) -> None:
    found = finishes(lambda: validate_text(workflow(input_schema, state_schema, with_value, output), "workflow"))
    assert all(isinstance(d, Diagnostic) and d.line >= 1 and d.column >= 1 for d in found)


def test_wide_recursive_references_stay_bounded(project) -> None:
    # Expanded naively these references are 12**8 schemas: a hang. (Speed: bench/.)
    refs = ", ".join(f"p{i}: {{$ref: '#/$defs/n'}}" for i in range(12))
    child = ("name: kid\nstate:\n  t:\n    $defs:\n      n: {type: object, properties: {" + refs + "}}\n"
             "    $ref: '#/$defs/n'\noutput: {t: $state.t}\nsteps:\n  - id: a\n    end: x\n")
    parent = ("name: parent\ninput: {type: object, properties: {xs: {type: array}}}\nstate:\n"
              "  all: {type: array}\nsteps:\n  - id: each\n    foreach: $input.xs\n    workflow: kid\n"
              "    save: state.all\n    next: end\n")
    root = project({"workflows/kid.yaml": child, "workflows/parent.yaml": parent})
    from wfops.compiler.validate import validate_project

    found = finishes(lambda: validate_project(root).diagnostics)
    assert [d.code for d in found if d.is_error] == []
