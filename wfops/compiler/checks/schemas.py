"""Embedded JSON Schemas must be valid draft 2020-12.

jsonschema costs ~64 ms to import, so a small structural check of the common
vocabulary runs first; only a schema it has doubts about goes to jsonschema,
which has the final word (and the exact message).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.jsontypes import JSON_TYPES
from wfops.loader.project import Loaded

_SCHEMA = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
                     "unevaluatedItems", "unevaluatedProperties", "additionalItems"})
_SCHEMA_MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LIST = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
_STRING = frozenset({"description", "title", "$comment", "format", "$ref", "$id", "$schema", "$anchor",
                     "$dynamicRef", "$dynamicAnchor", "contentMediaType", "contentEncoding"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
                    "minContains", "maxContains"})
_BOOL = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})


def embedded_schemas(loaded: Loaded) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(document path, schema) for every JSON Schema a workflow embeds."""
    model = loaded.model
    if model.input is not None:
        yield ("input",), model.input
    for name, declared in model.state.items():
        yield ("state", name), declared.json_schema()
    if model.output_schema is not None:
        yield ("output_schema",), model.output_schema
    for index, step in enumerate(model.steps):
        if getattr(step, "resume_schema", None) is not None:
            yield ("steps", index, "resume_schema"), step.resume_schema


def check_schemas(loaded: Loaded, sink: Sink) -> None:
    for at, schema in embedded_schemas(loaded):
        if not looks_valid(schema):
            problem = schema_problem(schema)
            if problem is not None:
                inner, message = problem
                sink.error("invalid-schema", f"not a valid JSON Schema (draft 2020-12): {message}", loaded,
                           (*at, *inner), hint="fix the schema; https://json-schema.org/understanding-json-schema/ "
                           "lists every keyword")


def looks_valid(schema: Any, depth: int = 0) -> bool:
    """True when the schema certainly conforms to the 2020-12 meta-schema (False: ask jsonschema)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > 40:
        return False
    for key, value in schema.items():
        if key == "type":
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, list) or not names or len(set(map(str, names))) != len(names) \
                    or not all(isinstance(n, str) and n in JSON_TYPES for n in names):
                return False
        elif key in _SCHEMA:
            if not looks_valid(value, depth + 1):
                return False
        elif key in _SCHEMA_MAP:
            if not isinstance(value, dict) or not all(looks_valid(v, depth + 1) for v in value.values()):
                return False
        elif key in _SCHEMA_LIST:
            if not isinstance(value, list) or not value or not all(looks_valid(v, depth + 1) for v in value):
                return False
        elif key == "required":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value) \
                    or len(set(value)) != len(value):
                return False
        elif key == "enum" or key == "examples":
            if not isinstance(value, list):
                return False
        elif key == "pattern":
            if not isinstance(value, str) or not _compiles(value):
                return False
        elif key in _STRING:
            if not isinstance(value, str) or key in ("$ref", "$schema", "$id", "$dynamicRef"):
                return False  # references: let jsonschema judge them
        elif key in _NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return False
        elif key in _COUNT:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                return False
        elif key in _BOOL:
            if not isinstance(value, bool):
                return False
        elif key not in ("const", "default", "multipleOf", "dependentRequired"):
            return False  # anything else: jsonschema decides
        elif key == "multipleOf" and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            return False
    return True


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def schema_problem(schema: Any) -> tuple[tuple[Any, ...], str] | None:
    """jsonschema's verdict: (path inside the schema, message), or None when valid."""
    # deferred: jsonschema (~60 ms), only when a file embeds a schema
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = tuple(exc.path)
        if path and path[-1] == "type":
            return path, f"{exc.instance!r} is not a JSON Schema type; use " + ", ".join(sorted(JSON_TYPES))
        return path, exc.message
    return _dangling_ref(schema)


# Keywords whose values are data, not schemas: a `$ref` key inside them is not a reference.
_DATA = frozenset({"const", "enum", "default", "examples"})


def _refs(schema: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield (*at, key), value
            elif key not in _DATA:
                yield from _refs(value, (*at, key))
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _refs(value, (*at, index))


def _has_id(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "$id" in schema or any(_has_id(v) for k, v in schema.items() if k not in _DATA)
    return isinstance(schema, list) and any(_has_id(v) for v in schema)


def _dangling_ref(schema: Any) -> tuple[tuple[Any, ...], str] | None:
    """A `$ref` that points nowhere inside the schema: a run would refuse the schema.

    wfops never fetches remote schemas, so only what the schema itself holds can be
    reached. Schemas with `$id` (their own base URIs) are left to run time.
    """
    refs = list(_refs(schema))
    if not refs or _has_id(schema):
        return None
    # deferred: referencing (~35 ms), only for schemas with a `$ref`
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    base = "urn:wfops:embedded-schema"
    resolver = Registry().with_resource(base, DRAFT202012.create_resource(schema)).resolver(base_uri=base)
    for at, ref in refs:
        try:
            resolver.lookup(ref)
        except Unresolvable:
            where = "outside this schema (wfops does not fetch schemas)" if not ref.startswith("#") \
                else "to nothing in this schema"
            return at, f"`$ref: {ref}` points {where}"
    return None
