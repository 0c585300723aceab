"""Say in words how a capability contract changed: which schema fields, which outcomes."""

from __future__ import annotations

import json
from typing import Any


def describe_contract_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable changes from the locked contract `old` to the current `new`."""
    changes: list[str] = []
    for side in ("input", "output"):
        key = f"{side}_schema"
        changes += _schema_changes(side, old.get(key) or {}, new.get(key) or {})
    old_outcomes, new_outcomes = list(old.get("outcomes") or []), list(new.get("outcomes") or [])
    added = [o for o in new_outcomes if o not in old_outcomes]
    removed = [o for o in old_outcomes if o not in new_outcomes]
    if added:
        changes.append("outcome " + ", ".join(f"`{o}`" for o in added) + " added")
    if removed:
        changes.append("outcome " + ", ".join(f"`{o}`" for o in removed) + " removed")
    old_defaults, new_defaults = old.get("defaults") or {}, new.get("defaults") or {}
    for key in sorted(set(old_defaults) | set(new_defaults)):
        if old_defaults.get(key) != new_defaults.get(key):
            before, after = (json.dumps(d.get(key), sort_keys=True) for d in (old_defaults, new_defaults))
            changes.append(f"default `{key}` {before} -> {after}")
    changes += _pin_changes(old.get("pins") or {}, new.get("pins") or {})
    return changes or ["the contract changed"]


def _pin_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What a capability stands on besides its schemas (a command's executable, a script's or an
    OpenAPI document's sha256): `sha256:<file>` pins hold content hashes, others a value."""
    changes: list[str] = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        kind, _, what = name.partition(":")
        if kind == "sha256" and before is not None and after is not None:
            changes.append(f"`{what}` changed (sha256 {str(before)[:12]} -> {str(after)[:12]})")
        elif before is None:
            changes.append(f"now depends on {_pin_label(kind, what, after)}")
        elif after is None:
            changes.append(f"no longer depends on {_pin_label(kind, what, before)}")
        else:
            changes.append(f"{kind} {json.dumps(before)} -> {json.dumps(after)}")
    return changes


def _pin_label(kind: str, what: str, value: Any) -> str:
    return f"`{what}`" if kind == "sha256" else f"{kind} {json.dumps(value)}"


def _schema_changes(side: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if old == new:
        return []
    changes: list[str] = []
    old_props, new_props = _props(old), _props(new)
    for name in new_props:
        if name not in old_props:
            changes.append(f"{side} field `{name}` added ({type_label(new_props[name], new)})")
    for name in old_props:
        if name not in new_props:
            changes.append(f"{side} field `{name}` removed")
    for name in old_props:
        if name in new_props and old_props[name] != new_props[name]:
            old_type, new_type = type_label(old_props[name], old), type_label(new_props[name], new)
            if old_type != new_type:
                changes.append(f"{side} field `{name}` type {old_type} -> {new_type}")
            else:
                changes.append(f"{side} field `{name}` " + _keyword_changes(old_props[name], new_props[name]))
    old_req, new_req = set(old.get("required") or []), set(new.get("required") or [])
    changes += [f"{side} field `{n}` is now required" for n in sorted(new_req - old_req)]
    changes += [f"{side} field `{n}` is no longer required" for n in sorted(old_req - new_req)]
    rest_old = {k: v for k, v in old.items() if k not in ("properties", "required", "$defs", "title")}
    rest_new = {k: v for k, v in new.items() if k not in ("properties", "required", "$defs", "title")}
    if rest_old != rest_new:
        keys = sorted(k for k in set(rest_old) | set(rest_new) if rest_old.get(k) != rest_new.get(k))
        changes.append(f"{side} schema changed at " + ", ".join(f"`{k}`" for k in keys))
    old_defs, new_defs = _defs(old), _defs(new)
    for name in sorted(set(old_defs) | set(new_defs)):
        before, after = old_defs.get(name), new_defs.get(name)
        if before == after:
            continue
        if before is None:
            changes.append(f"{side} model `{name}` added")
        elif after is None:
            changes.append(f"{side} model `{name}` removed")
        elif isinstance(before, dict) and isinstance(after, dict):
            changes += _schema_changes(f"{side} model `{name}`", {**before, "$defs": {}}, {**after, "$defs": {}})
        else:
            changes.append(f"{side} model `{name}` changed")
    return changes or [f"{side} schema changed"]


def _defs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs")
    return defs if isinstance(defs, dict) else {}


def _keyword_changes(old: Any, new: Any) -> str:
    """`minLength` added (1), `description` changed: which keywords of one field's schema differ."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "schema changed"
    words = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            words.append(f"`{key}` added{_shown(new[key], ' ({})')}")
        elif key not in new:
            words.append(f"`{key}` removed")
        elif old[key] != new[key]:
            before, after = _shown(old[key], "{}"), _shown(new[key], "{}")
            words.append(f"`{key}` {before} -> {after}" if before and after else f"`{key}` changed")
    return ("schema: " + ", ".join(words)) if words else "schema changed"


def _shown(value: Any, template: str) -> str:
    """A short value in `template`, or "" when it would not fit in a message."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return template.format(text) if len(text) <= 40 else ""


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def type_label(schema: Any, root: dict[str, Any] | None = None) -> str:
    """A short type name: `string`, `integer|null`, `array of string`, `Item` (a $ref)."""
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(map(str, kind))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {type_label(schema['items'], root)}"
    if isinstance(kind, str):
        return kind
    for combo in ("anyOf", "oneOf"):
        if isinstance(schema.get(combo), list):
            return "|".join(type_label(s, root) for s in schema[combo])
    if "enum" in schema:
        return "enum"
    if "const" in schema:
        return "const"
    return "any"
