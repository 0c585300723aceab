"""Naming the JSON type of a value, the one way every message and check does it."""

from __future__ import annotations

from typing import Any

_ARTICLE = {"null": "null", "boolean": "a boolean", "integer": "an integer", "number": "a number",
            "string": "a string", "array": "a list", "object": "a mapping"}


def json_type(value: Any) -> str:
    """The JSON Schema type of a value (`1.0` is an integer, as JSON Schema counts it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def described(value: Any) -> str:
    """The type as a message says it: "a string", "an integer", "a list", "null"."""
    kind = json_type(value)
    if isinstance(value, float) and kind == "integer":
        kind = "number"
    return _ARTICLE.get(kind, kind)
