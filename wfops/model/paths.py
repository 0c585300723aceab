"""Value paths (`$input.a.b`, `$state.items.0`, `$item`, `$secret.NAME`, `$$literal`).

Shared by the compiler (static checks) and the engine (resolution), so both read
a path the same way. No pydantic here: the engine imports this on its hot path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wfops.records import Record, init

ROOTS = ("input", "state", "context", "item", "index", "secret")

#: Keys and list indexes leading from a value down to one node inside it.
Location = tuple[str | int, ...]


class ValuePath(Record):
    __slots__ = ("root", "parts", "text")

    root: str
    parts: tuple[str | int, ...]
    text: str

    def __init__(self, root: str, parts: tuple[str | int, ...], text: str) -> None:
        init(self, "root", root)
        init(self, "parts", parts)
        init(self, "text", text)

    def __str__(self) -> str:
        return self.text


class PathSyntaxError(ValueError):
    pass


def is_path(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("$") and not value.startswith("$$")


def parse_path(text: str) -> ValuePath:
    """Parse `$root.a.0.b`. Digit-only segments become list indexes."""
    if not is_path(text):
        raise PathSyntaxError(f"{text!r} is not a path")
    body = text[1:]
    segments = body.split(".")
    root = segments[0]
    if root not in ROOTS:
        raise PathSyntaxError(f"unknown path root `${root}`; use one of " + ", ".join("$" + r for r in ROOTS))
    if any(segment == "" for segment in segments[1:]):
        raise PathSyntaxError(f"{text!r} has an empty segment")
    parts = tuple(int(s) if s.isdigit() else s for s in segments[1:])
    if root in ("item", "index") and root == "index" and parts:
        raise PathSyntaxError("`$index` is a number and has no fields")
    if root == "secret" and len(parts) != 1:
        raise PathSyntaxError("write a secret as `$secret.NAME`")
    return ValuePath(root, parts, text)


def item_named(value: Any, name: str) -> Any:
    """`value` (a foreach's `with`) with the paths rooted at the item's own name (`as: doc`:
    `$doc`, `$doc.title`) read as `$item`, the root the engine and the checks know."""
    if name == "item":
        return value
    if isinstance(value, str):
        if value == "$" + name or value.startswith(f"${name}."):
            return "$item" + value[len(name) + 1:]
        return value
    if isinstance(value, dict):
        return {key: item_named(inner, name) for key, inner in value.items()}
    if isinstance(value, list):
        return [item_named(inner, name) for inner in value]
    return value


def unescape(value: str) -> str:
    """`$$x` is the literal string `$x`."""
    return value[1:] if value.startswith("$$") else value


def iter_paths(value: Any, where: Location = ()) -> Iterator[tuple[Location, str]]:
    """Every path string inside a nested value, with where it stands (for diagnostics)."""
    if isinstance(value, str):
        if is_path(value):
            yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_paths(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_paths(item, (*where, index))


def parse_save_target(text: str) -> tuple[str, tuple[str, ...]]:
    """`state.field.key` -> ("field", ("key",))."""
    parts = text.split(".")
    if len(parts) < 2 or parts[0] != "state" or any(p == "" for p in parts):
        raise PathSyntaxError(f"save targets look like `state.<field>[.<key>...]`, not {text!r}")
    return parts[1], tuple(parts[2:])
