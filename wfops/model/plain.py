"""Load a valid file without pydantic: the committed schema decides, plain objects result.

`wfops validate` runs on every commit, and importing pydantic and building the
file-format models costs more than all the rest of a cold validate. Most files are
valid, and for a valid file the answer is already known from the committed editor
schemas (generated from the models, kept in step by a test) and the rules they
cannot state (`wfops.model.rules`). `load` walks a document against its schema with
the models' strict reading (an integer is not a bool, a number field holds a float,
keys are text) and builds `wfops.model.objects` as it goes. Each schema is compiled
once into nested checking functions, so a file costs a walk of its own data only.

It says yes only when it is sure. Anything it rejects, and any form it does not
decide, returns None and goes to the pydantic models, which have the final word and
the exact messages. So a wrong "no" costs time; only a wrong "yes" would be a bug, and
a test feeds both loaders the same documents to show there is none.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from wfops.model.json_schema import committed_path, model_of
from wfops.model.kinds import raw_kind
from wfops.model.objects import CLASSES, ROOTS, STEP_CLASSES, PlainModel, attribute_of, from_model
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


class _Undecided(Exception):
    """A definition this loader cannot compile, reached by a value: the pydantic models decide.
    Not an `_Unsure`, which a union takes to mean that one alternative does not fit."""


def load(kind: str, data: Any) -> PlainModel | None:
    """The plain object of a `kind` file ("workflow", "deployment", "sources") when `data` is
    certainly valid; None when the pydantic models must decide."""
    check = _compiled(kind)
    if check is None:
        return None
    try:
        made: PlainModel = check(data)
    except (_Unsure, _Undecided, Broken, OverflowError, RecursionError):
        return None
    return made


def built(kind: str, data: Any) -> PlainModel | None:
    """The plain object of a form the gate already passed (an artifact checked against its hash):
    the same compiled declaration builds it, with the declared defaults for any key it lacks, but
    no value is checked again (planning a long workflow from its record must not cost a second
    validation). None when the form does not fit the declaration at all (a required key missing)."""
    make = _compiled(kind, trusted=True)
    if make is None:
        return None
    try:
        made: PlainModel = make(data)
    except (_Unsure, _Undecided, Broken, TypeError, AttributeError, KeyError, ValueError, RecursionError):
        return None
    return made


def validated(kind: str, data: Any) -> PlainModel:
    """`data` of a `kind` file as its plain object; what the plain loader is not sure of, the
    pydantic models decide (raising their `ValidationError` when it is invalid)."""
    sure = load(kind, data)
    if sure is not None:
        return sure
    made: PlainModel = from_model(model_of(kind).model_validate(data))
    return made


Check = Callable[[Any], Any]


@cache
def _compiled(kind: str, *, trusted: bool = False) -> Check | None:
    root = ROOTS.get(kind)
    if root is None:
        return None
    schema: dict[str, Any] = json.loads(committed_path(kind).read_text(encoding="utf-8"))
    try:
        return _Compiler(schema.get("$defs", {}), trusted=trusted).model(schema, root)
    except _Unsure:  # a schema with a keyword this loader does not know: the models decide
        return None


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _unsure(_: Any = None) -> Any:
    raise _Unsure


def _step_union(alternatives: list[dict[str, Any]]) -> dict[str, str] | None:
    """Step kind -> `$ref` when the alternatives are the step kinds (pydantic's `Step` union)."""
    refs = {a.get("$ref", "").rsplit("/", 1)[-1]: a.get("$ref", "") for a in alternatives}
    kinds = {cls.__name__: kind for kind, cls in STEP_CLASSES.items()}
    return {kinds[name]: ref for name, ref in refs.items()} if refs.keys() == kinds.keys() else None


class _Compiler:
    """Schema -> a function that returns the value as the model would hold it, or raises _Unsure.
    `trusted`: for a form already checked, only build (pick union members, fill defaults, make
    the objects), check nothing."""

    def __init__(self, defs: dict[str, Any], *, trusted: bool = False) -> None:
        self.defs = defs
        self.trusted = trusted
        self.table: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/$defs/") or name not in self.defs or name not in CLASSES:
            raise _Unsure
        table = self.table

        def resolved(value: Any) -> Any:
            check = table.get(name)
            if check is None:
                # Compiled when a value first reaches it: a file uses a few of its schema's
                # definitions (one source kind, the step kinds it has), and a cold validate
                # compiles the schemas of every kind of file.
                try:
                    check = table[name] = self.model(self.defs[name], CLASSES[name])
                except _Unsure:
                    raise _Undecided from None
            return check(value)
        return resolved

    def value(self, schema: dict[str, Any]) -> Check:
        if not schema.keys() <= _KNOWN:
            raise _Unsure
        if "$ref" in schema:
            return self.ref(schema["$ref"])
        first: Check | None = None
        if "discriminator" in schema:
            first = self._tagged(schema["discriminator"])
        elif "anyOf" in schema or "oneOf" in schema:
            first = self._one_of(schema.get("anyOf") or schema["oneOf"])
        refuse = self.value(schema["not"]) if "not" in schema and not self.trusted else None
        typed = self._typed(schema)
        if first is None and refuse is None:
            return typed

        def combined(value: Any) -> Any:
            if first is not None:
                value = first(value)
            if refuse is not None and _fits(refuse, value):
                raise _Unsure
            return typed(value)
        return combined

    def _tagged(self, tag: dict[str, Any]) -> Check:
        """A union picked by a key's value, as pydantic's discriminated unions: the key must be
        there (a default `kind` does not choose)."""
        name = tag.get("propertyName")
        mapping = {key: self.ref(ref) for key, ref in tag.get("mapping", {}).items()}

        def tagged(value: Any) -> Any:
            if type(value) is not dict or not isinstance(value.get(name), str) or value[name] not in mapping:
                raise _Unsure
            return mapping[value[name]](value)
        return tagged

    def _one_of(self, alternatives: list[dict[str, Any]]) -> Check:
        """The alternatives here never overlap (pydantic's unions pick by type or tag): exactly one
        must take the value, which is then what it built."""
        steps = _step_union(alternatives)
        if steps is not None:
            # Pydantic picks a step's kind by its first kind key; the other kinds forbid that key.
            by_kind = {kind: self.ref(ref) for kind, ref in steps.items()}

            def step(value: Any) -> Any:
                kind = raw_kind(value) if type(value) is dict else None
                if kind is None or kind not in by_kind:
                    raise _Unsure
                return by_kind[kind](value)
            return step
        if self.trusted and "$ref" not in json.dumps(alternatives):
            return _same  # plain values only: nothing to pick or build
        nullable = any(a == {"type": "null"} for a in alternatives)
        others = [self.value(a) for a in alternatives if a != {"type": "null"}]
        # Every other alternative has a type or is a model: none of them takes null.
        null_only = nullable and all("type" in a or "$ref" in a for a in alternatives if a != {"type": "null"})
        if null_only and len(others) == 1:  # `X | None`, the common case
            (only,) = others
            return lambda value: None if value is None else only(value)

        def one_of(value: Any) -> Any:
            if value is None and null_only:
                return None
            built = []
            for alternative in others:
                try:
                    built.append(alternative(value))
                except (_Unsure, Broken):
                    continue
            if value is None and nullable:
                built.append(None)
            if len(built) > 1 and type(value) is int:  # `int | float` both take 1: pydantic's smart
                built = [b for b in built if type(b) is int]  # union keeps the exact type
            if len(built) != 1:
                raise _Unsure
            return built[0]
        return one_of

    def _typed(self, schema: dict[str, Any]) -> Check:
        kind = schema.get("type")
        if kind is None:
            check: Check = _same
        elif kind == "string":
            check = self._string(schema)
        elif kind == "integer" or kind == "number":
            check = self._number(schema, kind)
        elif kind == "boolean":
            check = _same if self.trusted else _of_type(bool)
        elif kind == "null":
            check = _same if self.trusted else _null
        elif kind == "array":
            check = self._array(schema)
        elif kind == "object":
            check = self._mapping(schema)
        else:
            raise _Unsure
        if "enum" not in schema and "const" not in schema or self.trusted:
            return check
        allowed = schema["enum"] if "enum" in schema else [schema["const"]]

        def listed(value: Any) -> Any:
            out = check(value)
            if not any(type(e) is type(out) and e == out for e in allowed):
                raise _Unsure
            return out
        return listed

    def _string(self, schema: dict[str, Any]) -> Check:
        if self.trusted:
            return _same
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        # Compiled when a value first meets it (`_regex`): a schema holds ~20 patterns, and a
        # cold validate of one file would otherwise compile those no field of it uses.
        pattern: str | None = schema.get("pattern")

        def string(value: Any) -> Any:
            if type(value) is not str or len(value) < low or high is not None and len(value) > high:
                raise _Unsure
            # Pydantic matches with Rust's regex, whose `$` does not match before a final
            # newline as Python's does: a value with a line break is left to pydantic.
            if pattern is not None and ("\n" in value or not _regex(pattern).search(value)):
                raise _Unsure
            return value
        return string

    def _number(self, schema: dict[str, Any], kind: str) -> Check:
        bounds = [(schema[key], test) for key, test in (
            ("minimum", operator.ge), ("maximum", operator.le),
            ("exclusiveMinimum", operator.gt), ("exclusiveMaximum", operator.lt)) if key in schema]
        integer = kind == "integer"
        if self.trusted:
            return _same if integer else float

        def number(value: Any) -> Any:
            if type(value) is not int and (integer or type(value) is not float):
                raise _Unsure
            out = value if integer else float(value)  # a float field holds a float
            for bound, test in bounds:
                if not test(out, bound):
                    raise _Unsure
            return out
        return number

    def _array(self, schema: dict[str, Any]) -> Check:
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        items = self.value(schema["items"]) if "items" in schema else None
        if self.trusted:
            return list if items is None else lambda value: [items(item) for item in value]

        def array(value: Any) -> Any:
            if type(value) is not list or len(value) < low or high is not None and len(value) > high:
                raise _Unsure
            return list(value) if items is None else [items(item) for item in value]
        return array

    def _keys(self, schema: dict[str, Any]) -> Check:
        low, high = schema.get("minProperties", 0), schema.get("maxProperties")
        if self.trusted:
            return _same
        names = self.value(schema["propertyNames"]) if "propertyNames" in schema else None

        def keys(value: Any) -> Any:
            if type(value) is not dict or not all(type(key) is str for key in value) \
                    or len(value) < low or high is not None and len(value) > high:
                raise _Unsure
            if names is not None:
                for key in value:
                    names(key)
            return value
        return keys

    def _mapping(self, schema: dict[str, Any]) -> Check:
        """A dict field (not a model): its values by `additionalProperties` / `patternProperties`."""
        if "properties" in schema or "required" in schema:
            raise _Unsure  # only models have named properties here
        keys = self._keys(schema)
        rest = schema.get("additionalProperties", True)
        if "patternProperties" in schema:
            if rest is not True:
                raise _Unsure
            patterns = [(p, self.value(s)) for p, s in schema["patternProperties"].items()]

            def by_pattern(value: Any) -> Any:
                out = {}
                for key, item in keys(value).items():
                    # Pydantic's `dict[Pattern, X]`: every key must match (JSON Schema would let
                    # other keys through).
                    matched = [check for regex, check in patterns if "\n" not in key and _regex(regex).search(key)]
                    if len(matched) != 1:
                        raise _Unsure
                    out[key] = matched[0](item)
                return out
            return by_pattern
        # The loaded mapping itself, not a copy, when nothing in it changes: a project's
        # `with:` and `save:` mappings are hundreds of thousands of small dicts (17 MB at
        # 100,000 steps), and nothing edits a loaded file's data or its objects. (A trusted
        # build reads a stored form its caller owns: copied.)
        if rest is True:
            return (lambda value: dict(value)) if self.trusted else keys
        if rest is False:
            def empty(value: Any) -> Any:
                if keys(value):
                    raise _Unsure
                return {}
            return empty
        each = self.value(rest)
        if self.trusted:
            return lambda value: {key: each(item) for key, item in value.items()}

        def values(value: Any) -> Any:
            checked = keys(value)
            for item in checked.values():
                if each(item) is not item:
                    return {key: each(item) for key, item in checked.items()}
            return checked
        return values

    def model(self, schema: dict[str, Any], cls: type[PlainModel]) -> Check:
        if not schema.keys() <= _KNOWN or schema.get("type") != "object" or "patternProperties" in schema:
            raise _Unsure
        keys = self._keys(schema)
        required = tuple(schema.get("required", ()))
        fields = [(name, attribute_of(name), self.value(spec), self._default(spec))
                  for name, spec in schema.get("properties", {}).items()]
        known = {name for name, *_ in fields}
        open_ = schema.get("additionalProperties", True) is True  # closed models: `extra="forbid"`
        if self.trusted:
            def build(value: Any) -> Any:
                extra = {key: item for key, item in value.items() if key not in known} if open_ else None
                return cls({attribute: check(value[name]) if name in value else default()
                            for name, attribute, check, default in fields}, extra)
            return build

        def model(value: Any) -> Any:
            keys(value)
            for name in required:
                if name not in value:
                    raise _Unsure
            extra = None
            if open_:
                extra = {key: item for key, item in value.items() if key not in known}
            elif not known.issuperset(value):
                raise _Unsure
            made: dict[str, Any] = {}
            for name, attribute, check, default in fields:
                made[attribute] = check(value[name]) if name in value else default()
            built = cls(made, extra)
            built.check()
            return built
        return model

    def _default(self, spec: dict[str, Any]) -> Callable[[], Any]:
        """As pydantic keeps it: a plain default as written (not converted: `timeout: 30` stays an
        int), a model default (the executor's) as its plain object; no default: the model's
        `default_factory` (an empty dict or list)."""
        if "default" not in spec:
            if spec.get("type") == "object":
                return dict
            if spec.get("type") == "array":
                return list
            return _unsure
        default = spec["default"]
        if isinstance(default, dict) and ("$ref" in spec or "oneOf" in spec or "anyOf" in spec):
            check = self.value(spec)
            return lambda: check(default)
        if isinstance(default, dict | list):
            return _unsure  # pydantic copies mutable defaults; none of ours is one
        return lambda: default


def _same(value: Any) -> Any:
    return value


def _null(value: Any) -> Any:
    if value is not None:
        raise _Unsure
    return value


def _of_type(kind: type) -> Check:
    def typed(value: Any) -> Any:
        if type(value) is not kind:
            raise _Unsure
        return value
    return typed


def _fits(check: Check, value: Any) -> bool:
    try:
        check(value)
    except (_Unsure, Broken):
        return False
    return True
