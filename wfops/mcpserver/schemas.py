"""Output schemas as `tools/list` shows them: each tool's result as a small top level (its own
fields and their JSON types, after the envelope every result shares: ok, error, diagnostics,
next_actions, next_steps, cuts), with the shared shapes (a run, a diagnostic, a next action)
named, not repeated: their whole schemas are the `wfops://schemas/results` resource, once.

The SDK derives a tool's full output schema from its result model, `$defs` and all; repeated
over every tool that made `tools/list` several times larger than everything else in it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

RESULTS_URI = "wfops://schemas/results"
#: The fields every result has (`Envelope`): named once in each tool's description, not listed.
ENVELOPE = ("error", "diagnostics", "next_actions", "next_steps", "cuts")
_NOTE = "Envelope + these fields"


def compact(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """`schema` (a result model's JSON schema) cut to its top level."""
    if not schema or "properties" not in schema:
        return schema
    defs = schema.get("$defs") or {}
    fields = {name: _field(prop, defs) for name, prop in schema["properties"].items() if name not in ENVELOPE}
    out: dict[str, Any] = {"type": "object", "description": _NOTE, "properties": fields}
    if schema.get("required"):
        out["required"] = [name for name in schema["required"] if name not in ENVELOPE]
    return out


def slim_input(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without what pydantic adds for no reader (titles), a nullable scalar
    as a type list: the same constraints in fewer characters."""
    out = {k: v for k, v in schema.items() if k != "title"}
    if "properties" in out:
        out["properties"] = {name: _slim(prop) for name, prop in out["properties"].items()}
    return out


def _slim(prop: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k != "title"}
    branches = out.get("anyOf")
    if branches and all(set(b) == {"type"} and isinstance(b["type"], str) for b in branches):
        del out["anyOf"]
        out["type"] = [b["type"] for b in branches]
    return out


def one_paragraph(text: str) -> str:
    """A docstring as one paragraph (its line breaks and indentation are the source's, not the reader's)."""
    return " ".join(text.split())


def _field(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    types: list[str] = []
    names: list[str] = []
    for branch in prop.get("anyOf") or [prop]:
        kind, name = _kind(branch, defs)
        if kind is None:
            return {}  # free JSON: any value
        types.append(kind)
        if name:
            names.append(name)
    out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if "enum" in prop:
        out["enum"] = prop["enum"]
    if names:
        out["description"] = " or ".join(names)
    return out


def _kind(branch: dict[str, Any], defs: dict[str, Any]) -> tuple[str | None, str | None]:
    ref = branch.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name) or {}
        return str(target.get("type") or "object"), name
    kind = branch.get("type")
    if kind is None:
        return (None, None) if "enum" not in branch else ("string", None)
    if kind == "array":
        item = branch.get("items") or {}
        _item_kind, item_name = _kind(item, defs) if item else (None, None)
        return "array", (f"list of {item_name}" if item_name else None)
    return str(kind), None


def results_schema(models: list[type[BaseModel]]) -> str:
    """Every result model and the shapes they share, as one JSON Schema document."""
    _each, document = models_json_schema([(m, "serialization") for m in models],
                                         title="wfops mcp tool results")
    return json.dumps(document, indent=1, sort_keys=True)
