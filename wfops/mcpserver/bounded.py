"""The one size limit of every `wfops mcp` result (`max_chars`, default 64 KB of JSON).

A result over the limit has its largest values cut, biggest first, until it fits: a long
string keeps its head and says it was cut; a free-form data value (a run's or a step's
input/output, an interrupt's request, a schema) becomes a marker object. Each cut is
listed in the result's `cuts` with its JSON Pointer, its whole size and, where there is
one, the call that returns it whole in pages (`get`). Markers fit the output schemas:
only fields typed as free JSON are ever replaced by an object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wfops.jsonvalues import pointer_key, pointer_token

DEFAULT_MAX_CHARS = 64 * 1024
MIN_MAX_CHARS = 4096
MAX_MAX_CHARS = 4_000_000
#: Keys whose values are free JSON in every result model (a marker object fits them).
DATA_KEYS = frozenset({"input", "output", "request", "value", "payload", "input_schema", "output_schema",
                       "resume_schema", "arguments"})
#: Values smaller than this are never cut: cutting them saves nothing.
SMALLEST_CUT = 256
STRING_HEAD = 400
CUT_MARK = "…[cut: see `cuts`]"

Locate = Callable[[str, Any], Any]  # (pointer, the cut value) -> a NextAction that gets it whole, or None


class TooLarge(Exception):
    """The result does not fit even with every value cut."""


def size_of(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def bound(data: dict[str, Any], max_chars: int, locate: Locate | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`data` (a result as JSON) cut to fit `max_chars`; returns it and the cuts made."""
    total = size_of(data)
    if total <= max_chars:
        return data, []
    candidates = sorted(_candidates(data, ""), key=lambda c: -c[2])
    cuts: list[dict[str, Any]] = []
    cut_paths: list[str] = []
    for pointer, value, size in candidates:
        if total <= max_chars:
            break
        if any(pointer.startswith(done + "/") for done in cut_paths):
            continue  # inside a value cut already
        replacement = _replacement(value)
        _set(data, pointer, replacement)
        total -= size - size_of(replacement)
        cut_paths.append(pointer)
        get = locate(pointer, value) if locate is not None else None
        cuts.append({"path": pointer, "chars": size, "get": get})
        # Each cut is listed; an over-long list of cuts is itself bounded by the budget.
        total += size_of(cuts[-1]) + 1
    if total > max_chars:
        raise TooLarge(f"the result is {total} characters even with its values cut (max_chars {max_chars})")
    return data, cuts


def _candidates(node: Any, pointer: str, key: str | None = None) -> list[tuple[str, Any, int]]:
    found: list[tuple[str, Any, int]] = []
    if isinstance(node, str):
        if len(node) > SMALLEST_CUT:
            found.append((pointer, node, size_of(node)))
        return found
    if isinstance(node, dict | list):
        size = size_of(node)
        if size <= SMALLEST_CUT:
            return found
        if key in DATA_KEYS and isinstance(node, dict | list):
            found.append((pointer, node, size))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for child_key, child in items:
            found += _candidates(child, f"{pointer}/{pointer_token(child_key)}", str(child_key) if isinstance(node, dict) else key)
    return found


def _replacement(value: Any) -> Any:
    if isinstance(value, str):
        return value[:STRING_HEAD] + CUT_MARK
    return {"$cut": True, "chars": size_of(value), "preview": json.dumps(value, ensure_ascii=False,
                                                                        default=str)[:200]}


def _set(data: Any, pointer: str, value: Any) -> None:
    parts = [pointer_key(p) for p in pointer[1:].split("/")]
    node = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def page(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """One page of `text` from `offset` that leaves room in a result of `max_chars`."""
    room = max(1024, max_chars - 4096)
    chunk = text[offset:offset + room]
    # JSON-escaping can grow text; shrink until the page's own JSON fits the room.
    while size_of(chunk) > room and len(chunk) > 1:
        chunk = chunk[: len(chunk) * 3 // 4]
    end = offset + len(chunk)
    return chunk, (end if end < len(text) else None)
