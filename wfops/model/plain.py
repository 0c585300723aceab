"""Load a valid file without pydantic: the committed schema decides, plain objects result.

`wfops validate` runs on every commit, and importing pydantic and building the
file-format models costs more than all the rest of a cold validate. Most files are
valid, and for a valid file the answer is already known from the committed editor
schemas (generated from the models, kept in step by a test) and the rules they
cannot state (`wfops.model.rules`). `load` walks a document against its schema with
the models' strict reading (an integer is not a bool, a number field holds a float,
keys are text) and builds `wfops.model.objects` as it goes.

It says yes only when it is sure. Anything it rejects, and any form it does not
decide, returns None and goes to the pydantic models, which have the final word and
the exact messages. So a wrong "no" costs time; only a wrong "yes" would be a bug, and
a test feeds both loaders the same documents to show there is none.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from wfops.model.json_schema import committed_path, model_of
from wfops.model.objects import CLASSES, ROOTS, PlainModel, attribute_of, from_model
from wfops.model.rules import Broken

# Keywords that only describe: they never reject a value.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "discriminator", "$schema", "$defs"})
_KNOWN = _ANNOTATIONS | {
    "type", "enum", "const", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "properties",
    "required", "additionalProperties", "patternProperties", "propertyNames", "items", "anyOf", "oneOf",
    "not", "$ref",
}


class _Unsure(Exception):
    """Not certainly valid: the pydantic models decide."""


def load(kind: str, data: Any) -> PlainModel | None:
    """The plain object of a `kind` file ("workflow", "deployment", "sources") when `data` is
    certainly valid; None when the pydantic models must decide."""
    root = ROOTS.get(kind)
    if root is None:
        return None
    schema = _schema(kind)
    try:
        return _Walk(schema.get("$defs", {})).model(schema, data, root)
    except (_Unsure, Broken, OverflowError, RecursionError):
        return None


def validated(kind: str, data: Any) -> PlainModel:
    """`data` of a `kind` file as its plain object; what the plain loader is not sure of, the
    pydantic models decide (raising their `ValidationError` when it is invalid)."""
    sure = load(kind, data)
    if sure is not None:
        return sure
    made: PlainModel = from_model(model_of(kind).model_validate(data))
    return made


@cache
def _schema(kind: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(committed_path(kind).read_text(encoding="utf-8"))
    return loaded


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class _Walk:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def value(self, schema: dict[str, Any], value: Any) -> Any:
        """`value` as the model would hold it, or _Unsure."""
        if not schema.keys() <= _KNOWN:
            raise _Unsure
        ref = schema.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith("#/$defs/") or name not in self.defs or name not in CLASSES:
                raise _Unsure
            return self.model(self.defs[name], value, CLASSES[name])
        tag = schema.get("discriminator")
        if tag is not None:
            value = self._tagged(tag, value)
        else:
            for combinator in ("anyOf", "oneOf"):
                if combinator in schema:
                    value = self._one_of(schema[combinator], value)
        if "not" in schema and self._fits(schema["not"], value):
            raise _Unsure
        return self._typed(schema, value)

    def _tagged(self, tag: dict[str, Any], value: Any) -> Any:
        """A union picked by a key's value, as pydantic's discriminated unions: the key must be
        there (a default `kind` does not choose)."""
        name = tag.get("propertyName")
        if type(value) is not dict or name not in value or not isinstance(value[name], str):
            raise _Unsure
        ref = tag.get("mapping", {}).get(value[name])
        if ref is None:
            raise _Unsure
        return self.value({"$ref": ref}, value)

    def _one_of(self, alternatives: list[dict[str, Any]], value: Any) -> Any:
        """The alternatives here never overlap (pydantic's unions pick by type or tag): exactly one
        must take the value, which is then what it built."""
        built = []
        for alternative in alternatives:
            try:
                built.append(self.value(alternative, value))
            except (_Unsure, Broken):
                continue
        if len(built) != 1:
            raise _Unsure
        return built[0]

    def _fits(self, schema: dict[str, Any], value: Any) -> bool:
        try:
            self.value(schema, value)
        except (_Unsure, Broken):
            return False
        return True

    def _typed(self, schema: dict[str, Any], value: Any) -> Any:
        kind = schema.get("type")
        if kind is None:
            out = value
        elif kind == "string":
            out = self._string(schema, value)
        elif kind == "integer" or kind == "number":
            out = self._number(schema, value, kind)
        elif kind == "boolean":
            if type(value) is not bool:
                raise _Unsure
            out = value
        elif kind == "null":
            if value is not None:
                raise _Unsure
            out = value
        elif kind == "array":
            out = self._array(schema, value)
        elif kind == "object":
            out = self._mapping(schema, value)
        else:
            raise _Unsure
        if "enum" in schema and not any(type(e) is type(out) and e == out for e in schema["enum"]):
            raise _Unsure
        if "const" in schema and not (type(schema["const"]) is type(out) and schema["const"] == out):
            raise _Unsure
        return out

    def _string(self, schema: dict[str, Any], value: Any) -> str:
        if type(value) is not str:
            raise _Unsure
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            raise _Unsure
        pattern = schema.get("pattern")
        # Pydantic matches with Rust's regex, whose `$` does not match before a final newline
        # as Python's does: a value with a line break is left to pydantic.
        if pattern is not None and ("\n" in value or not _regex(pattern).search(value)):
            raise _Unsure
        return value

    def _number(self, schema: dict[str, Any], value: Any, kind: str) -> int | float:
        if type(value) is not int and (kind == "integer" or type(value) is not float):
            raise _Unsure
        number = value if kind == "integer" else float(value)  # a float field holds a float
        if "minimum" in schema and not number >= schema["minimum"] \
                or "maximum" in schema and not number <= schema["maximum"] \
                or "exclusiveMinimum" in schema and not number > schema["exclusiveMinimum"] \
                or "exclusiveMaximum" in schema and not number < schema["exclusiveMaximum"]:
            raise _Unsure
        return number

    def _array(self, schema: dict[str, Any], value: Any) -> list[Any]:
        if type(value) is not list or not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            raise _Unsure
        items = schema.get("items")
        return list(value) if items is None else [self.value(items, item) for item in value]

    def _keys(self, schema: dict[str, Any], value: Any) -> dict[str, Any]:
        if type(value) is not dict or not all(type(key) is str for key in value):
            raise _Unsure
        if not schema.get("minProperties", 0) <= len(value) <= schema.get("maxProperties", len(value)):
            raise _Unsure
        names = schema.get("propertyNames")
        if names is not None:
            for key in value:
                self.value(names, key)
        return value

    def _mapping(self, schema: dict[str, Any], value: Any) -> dict[str, Any]:
        """A dict field (not a model): its values by `additionalProperties` / `patternProperties`."""
        value = self._keys(schema, value)
        if "properties" in schema or "required" in schema:
            raise _Unsure  # only models have named properties here
        patterns = schema.get("patternProperties")
        rest = schema.get("additionalProperties", True)
        out = {}
        for key, item in value.items():
            if patterns is not None:
                # Pydantic's `dict[Pattern, X]`: every key must match (JSON Schema would let
                # other keys through).
                matched = [s for p, s in patterns.items() if "\n" not in key and _regex(p).search(key)]
                if len(matched) != 1 or rest is not True:
                    raise _Unsure
                out[key] = self.value(matched[0], item)
            elif rest is True:
                out[key] = item
            elif rest is False:
                raise _Unsure
            else:
                out[key] = self.value(rest, item)
        return out

    def model(self, schema: dict[str, Any], value: Any, cls: type[PlainModel]) -> PlainModel:
        if not schema.keys() <= _KNOWN or schema.get("type") != "object" or "patternProperties" in schema:
            raise _Unsure
        value = self._keys(schema, value)
        properties: dict[str, Any] = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", ())):
            raise _Unsure
        fields: dict[str, Any] = {}
        for name, spec in properties.items():
            if name in value:
                fields[attribute_of(name)] = self.value(spec, value[name])
            elif "default" in spec:
                fields[attribute_of(name)] = self._default(spec)
            elif spec.get("type") == "object":
                fields[attribute_of(name)] = {}  # the model's default_factory=dict
            elif spec.get("type") == "array":
                fields[attribute_of(name)] = []
            else:
                raise _Unsure
        extra = {key: item for key, item in value.items() if key not in properties}
        rest = schema.get("additionalProperties", True)
        if extra and rest is not True:
            raise _Unsure  # closed models (`extra="forbid"`); no model here types its extras
        made = cls(fields, extra if rest is True else None)
        made.check()
        return made

    def _default(self, spec: dict[str, Any]) -> Any:
        """As pydantic keeps it: a plain default as written (not converted: `timeout: 30` stays an
        int), a model default (the executor's) as its plain object."""
        default = spec["default"]
        if isinstance(default, dict) and ("$ref" in spec or "oneOf" in spec or "anyOf" in spec):
            return self.value(spec, default)
        if isinstance(default, dict | list):
            raise _Unsure  # pydantic copies mutable defaults; none of ours is one
        return default
