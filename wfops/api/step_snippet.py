"""A ready-to-paste workflow step calling one capability (`wfops caps show` ends with it).

`uses` the ref, `with` each required input bound to `$input.<name>` (the optional ones
named in a comment), `save` each output field to `state.<name>` (the whole output when
its fields are unknown), and `next: end` or `on:` with every outcome routed to `end`.
The author then renames, rebinds and reroutes; what is written validates once the
workflow declares those input and state fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wfops.api.results import CapabilityInfo

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def example_step(cap: CapabilityInfo) -> str:
    """The step as YAML text: one item of a workflow's `steps:` list, indented for it."""
    inputs = _properties(cap.input_schema)
    required = [name for name in cap.input_schema.get("required", []) if isinstance(name, str)]
    optional = [name for name in inputs if name not in required]
    lines = [f"  - id: {_step_id(cap.name)}", f"    uses: {cap.ref}"]
    if required:
        lines.append("    with:")
        lines += [f"      {_key(name)}: $input.{name}{_about(inputs.get(name))}" for name in required]
    else:
        lines.append("    with: {}")
    if optional:
        lines.append(f"    # optional inputs: {', '.join(optional)}")
    outputs = _properties(cap.output_schema)
    if outputs:
        lines.append("    save:                   # declare these fields under `state:`")
        lines += [f"      {_key(name)}: state.{name}" for name in outputs]
    else:
        lines.append(f"    save: state.{_step_id(cap.name)}   # the whole output; declare it under `state:`")
    if cap.outcomes == ["ok"]:
        lines.append("    next: end")
    else:
        lines.append("    on: {" + ", ".join(f"{_key(outcome)}: end" for outcome in cap.outcomes) + "}")
    return "\n".join(lines) + "\n"


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties") if isinstance(schema, dict) else None
    return {str(k): v for k, v in found.items()} if isinstance(found, dict) else {}


def _about(schema: Any) -> str:
    """`   # string: Who to greet.` from a property's schema."""
    if not isinstance(schema, dict):
        return ""
    kind = schema.get("type")
    words = [str(kind)] if isinstance(kind, str) else []
    text = " ".join(str(schema.get("description") or "").split())
    note = ": ".join(part for part in (" ".join(words), text) if part)
    return f"   # {note}" if note else ""


def _step_id(name: str) -> str:
    """A step id (a letter or `_` first, then letters, digits, `_` and `-`) from a capability name."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_-") or "call"
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"_{cleaned}"


def _key(name: str) -> str:
    return name if _PLAIN.fullmatch(name) else json.dumps(name)
