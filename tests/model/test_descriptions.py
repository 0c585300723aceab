"""Every property of every editor schema has a description (editors show it on hover)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wfops.model.json_schema import KINDS, schema_text


def _undescribed(node: Any, where: str) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            if isinstance(prop, dict) and "description" not in prop:
                found.append(f"{where}.{name}")
        for key, value in node.items():
            found += _undescribed(value, key if where.endswith("$defs") or key == "$defs" else where)
    elif isinstance(node, list):
        for item in node:
            found += _undescribed(item, where)
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_every_property_is_described(kind: str) -> None:
    assert _undescribed(json.loads(schema_text(kind)), kind) == []
