"""Just enough JSON Schema reading for gradual type checks.

A schema is handled as a `Sch` (node, root) pair so `$ref`s resolve against
the document they came from (pydantic puts models under `$defs`). `None`
stands for "unknown": anything fits into or out of it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from wfops.jsonvalues import json_type, pointer_key

JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})
NUMERIC = frozenset({"integer", "number"})
_MAX_REF_HOPS = 16


class Sch(NamedTuple):
    node: Any
    root: Any


def sch(schema: Any) -> Sch | None:
    """A schema that is its own root; None for a missing schema."""
    return None if schema is None else Sch(schema, schema)


def resolve(s: Sch | None) -> Sch | None:
    """Follow local `$ref`s (`#/$defs/X`); an unresolvable ref is unknown."""
    if s is not None and s.node.__class__ is dict and "$ref" not in s.node:
        return s  # the common case, asked for many times per path: no ref to follow
    hops = 0
    while s is not None and isinstance(s.node, dict) and isinstance(s.node.get("$ref"), str):
        hops += 1
        ref = s.node["$ref"]
        if hops > _MAX_REF_HOPS or not ref.startswith("#"):
            return None
        target: Any = s.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = pointer_key(part)
            if isinstance(target, dict) and part in target:
                target = target[part]
            else:
                return None
        s = Sch(target, s.root)
    if s is None or not isinstance(s.node, dict):
        return None  # `true`, `{}`-less booleans and junk: unknown
    return s


def types_of(s: Sch | None) -> frozenset[str] | None:
    """The JSON types a schema admits, or None when it does not say."""
    if s is None or s.node.__class__ is not dict or "$ref" in s.node:  # else resolve(s) is s: no call
        s = resolve(s)
        if s is None:
            return None
    assert s is not None
    node = s.node
    declared = node.get("type")
    if isinstance(declared, str):
        return frozenset({declared}) & JSON_TYPES or None
    if isinstance(declared, list):
        return frozenset(t for t in declared if isinstance(t, str) and t in JSON_TYPES) or None
    if "const" in node:
        return frozenset({json_type(node["const"])})
    if _list(node.get("enum")):
        return frozenset(json_type(v) for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        branches = _list(node.get(key))
        if branches:
            found: set[str] = set()
            for branch in branches:
                t = types_of(Sch(branch, s.root))
                if t is None:
                    return None
                found |= t
            return frozenset(found)
    if isinstance(node.get("allOf"), list):
        known = [t for b in node["allOf"] if (t := types_of(Sch(b, s.root))) is not None]
        if known:
            result = known[0]
            for t in known[1:]:
                result = result & t
            return result
    return None


def _list(value: Any) -> list[Any]:
    """A keyword that should hold a list; anything else (invalid-schema reports it) is empty."""
    return value if isinstance(value, list) else []


def _branches(s: Sch) -> list[Sch] | tuple[Sch]:
    """The schema itself plus its anyOf/oneOf/allOf branches (for Optional[Model] and friends)."""
    node = s.node
    if "anyOf" not in node and "oneOf" not in node and "allOf" not in node:
        return (s,)  # the common case, asked for many times per path
    found = [s]
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in _list(s.node.get(key)):
            r = resolve(Sch(branch, s.root))
            if r is not None:
                found.append(r)
    return found


def properties(s: Sch | None) -> dict[str, Any] | None:
    """The declared `properties` (merged over branches), or None when none are declared."""
    s = resolve(s)
    if s is None:
        return None
    merged: dict[str, Any] | None = None
    for branch in _branches(s):
        props = branch.node.get("properties")
        if isinstance(props, dict):
            # One branch's properties as they are (no caller changes them): a copy only to merge.
            merged = props if merged is None else {**merged, **props}
    return merged


def closed(s: Sch | None) -> bool:
    """True when the schema forbids properties it does not list."""
    s = resolve(s)
    return s is not None and s.node.get("additionalProperties") is False


def open_to_extra(s: Sch | None) -> bool:
    """True when the schema explicitly admits extra properties."""
    s = resolve(s)
    if s is None:
        return True
    extra = s.node.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or "patternProperties" in s.node


def required(s: Sch | None) -> list[str]:
    s = resolve(s)
    if s is None:
        return []
    names: list[str] = []
    for branch in _branches(s) if "required" not in s.node else [s]:
        names += [r for r in _list(branch.node.get("required")) if isinstance(r, str)]
    return list(dict.fromkeys(names))


def child(s: Sch | None, part: str | int) -> Sch | None:
    """The schema of `value[part]`, or None when unknown."""
    if s is None or s.node.__class__ is not dict or "$ref" in s.node:  # else resolve(s) is s: no call
        s = resolve(s)
        if s is None:
            return None
    assert s is not None
    for branch in _branches(s):
        node = branch.node
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            index = int(part)
            prefix = node.get("prefixItems")
            if isinstance(prefix, list) and index < len(prefix):
                return Sch(prefix[index], s.root)
            if isinstance(node.get("items"), dict):
                return Sch(node["items"], s.root)
        if isinstance(part, str):
            props = node.get("properties")
            if isinstance(props, dict) and part in props:
                return Sch(props[part], s.root)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return Sch(extra, s.root)
    return None


def items(s: Sch | None) -> Sch | None:
    return child(s, 0)


def overlaps(src: frozenset[str] | None, dst: frozenset[str] | None, *, exact: bool = False) -> bool:
    """Could a value of types `src` be one of `dst`? `integer` fits `number`; a `number`
    schema may hold an integer unless `exact` (a literal whose value we know)."""
    if src is None or dst is None:
        return True
    for t in src:
        if t in dst:
            return True
        if t == "integer" and "number" in dst:
            return True
        if t == "number" and "integer" in dst and not exact:
            return True
    return False


def describe(types: frozenset[str] | None) -> str:
    if not types:
        return "any"
    return " or ".join(sorted(types))


def mismatch(src: Sch | None, dst: Sch | None, depth: int = 0) -> tuple[tuple[Any, ...], frozenset[Any], frozenset[Any]] | None:
    """Where two schemas cannot overlap: (path inside the value, src types, dst types), or None."""
    src_t, dst_t = types_of(src), types_of(dst)
    if not overlaps(src_t, dst_t):
        return ((), src_t or frozenset(), dst_t or frozenset())
    if depth >= 6 or src_t is None or dst_t is None:
        return None
    if "object" in src_t and "object" in dst_t:
        src_props, dst_props = properties(src) or {}, properties(dst) or {}
        for name in dst_props:
            if name in src_props:
                found = mismatch(child(src, name), child(dst, name), depth + 1)
                if found is not None:
                    return ((name, *found[0]), found[1], found[2])
    if "array" in src_t and "array" in dst_t:
        found = mismatch(items(src), items(dst), depth + 1)
        if found is not None:
            return ((0, *found[0]), found[1], found[2])
    return None


def inline(s: Sch | None, depth: int = 0, budget: list[int] | None = None) -> Any:
    """A copy of the schema with local `$ref`s replaced, so it can stand without its root.
    Recursive or very wide references stop expanding (into `{}`: unknown) after a budget."""
    budget = [4000] if budget is None else budget
    budget[0] -= 1
    if s is None or budget[0] < 0:
        return {}
    if isinstance(s.node, dict) and "$ref" in s.node:
        r = resolve(s)
        return inline(r, depth + 1, budget) if r is not None and depth < 8 else {}
    if isinstance(s.node, dict):
        return {k: (v if k in ("enum", "const", "required", "default", "examples")
                    else inline(Sch(v, s.root), depth, budget))
                for k, v in s.node.items() if k not in ("$defs", "definitions")}
    if isinstance(s.node, list):
        return [inline(Sch(v, s.root), depth, budget) for v in s.node]
    return s.node
