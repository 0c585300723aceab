"""RFC 6902 JSON Patch over a YAML round-trip document, so an agent's focused edit keeps the
file's comments, key order and quoting: the document is edited in place (ruamel's
CommentedMap/CommentedSeq are dict and list subclasses), never rebuilt.

Ops: add, remove, replace, move, copy, test. Paths are RFC 6901 JSON Pointers (`~1` is
`/`, `~0` is `~`; `-` appends to an array). A failure names the op by its index.

A patch's work is bounded, since its author may be an agent: at most `MAX_OPS` ops, a
document that never grows past the largest file wfops reads, as JSON (checked before each
op that adds a value, so a value is never copied past the limit), and `MAX_SECONDS` of
work. Each bound is a `PatchError` naming the op that crossed it.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import MutableMapping, MutableSequence
from typing import Any

from wfops.errors import UsageError
from wfops.jsonvalues import json_size, pointer_key, pointer_token

OPS = ("add", "remove", "replace", "move", "copy", "test")
MAX_OPS = 1000
MAX_SECONDS = 0.5
_BAD_ESCAPE = re.compile(r"~(?![01])")


class PatchError(UsageError):
    """A patch that is malformed or does not apply; the document may be partly edited."""


def apply_patch(doc: Any, patch: Any) -> Any:
    """`doc` with every op of `patch` applied in order (edited in place where it can be);
    the whole document is returned, since `add`/`replace` at "" replace it."""
    if not isinstance(patch, list):
        raise PatchError("the patch must be an array of operations",
                         hint='e.g. [{"op": "replace", "path": "/steps/0/next", "value": "end"}]')
    if len(patch) > MAX_OPS:
        raise PatchError(f"the patch has {len(patch)} operations; at most {MAX_OPS} are applied",
                         hint="split it, or write the whole text with write_file")
    budget = _Budget(doc)
    for index, op in enumerate(patch):
        budget.tick(index)
        doc = _apply_one(doc, op, index, budget)
    return doc


class _Budget:
    """The document's JSON size as ops change it, and the time the patch may take."""

    def __init__(self, doc: Any) -> None:
        # deferred: the YAML loader is off the validate cache-hit path, which imports this module
        from wfops.loader.yaml import MAX_FILE_BYTES

        self.limit = MAX_FILE_BYTES  # a patched file must stay one wfops reads
        self.size = json_size(doc)
        self.deadline = time.monotonic() + MAX_SECONDS

    def tick(self, index: int) -> None:
        if time.monotonic() > self.deadline:
            raise PatchError(f"patch op #{index}: the patch took more than {MAX_SECONDS:g}s and was stopped",
                             hint="a patch makes focused edits; write a large change with write_file")

    def change(self, where: str, added: Any = None, removed: Any = None) -> None:
        """Account for `added` replacing `removed`; refused, before anything is copied, past the limit."""
        grown = self.size + (json_size(added) if added is not None else 0) - \
            (json_size(removed) if removed is not None else 0)
        if grown > self.limit:
            raise PatchError(f"{where}: the document would grow to {grown} bytes of JSON; a patched file "
                             f"holds at most {self.limit}",
                             hint="a patch makes focused edits; check its `copy` and `add` values")
        self.size = grown


def parse_pointer(pointer: Any, where: str) -> list[str]:
    if not isinstance(pointer, str):
        raise PatchError(f"{where}: a JSON Pointer must be a string, not {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"{where}: JSON Pointer {pointer!r} must start with '/' (or be '' for the whole document)")
    bad = _BAD_ESCAPE.search(pointer)
    if bad is not None:
        raise PatchError(f"{where}: JSON Pointer {pointer!r} has {pointer[bad.start():bad.start() + 2]!r} at "
                         f"character {bad.start()}: `~` is written `~0` and `/` is `~1`")
    return [pointer_key(part) for part in pointer[1:].split("/")]


def _apply_one(doc: Any, op: Any, index: int, budget: _Budget) -> Any:
    if not isinstance(op, dict):
        raise PatchError(f"patch op #{index}: must be an object with `op` and `path`")
    name = op.get("op")
    if name not in OPS:
        raise PatchError(f"patch op #{index}: unknown op {name!r}", hint="op is one of: " + ", ".join(OPS))
    where = f"patch op #{index} ({name} {op.get('path')!r})"
    if "path" not in op:
        raise PatchError(f"patch op #{index} ({name}): `path` is missing")
    path = parse_pointer(op["path"], where)
    for needed in (("value",) if name in ("add", "replace", "test") else ("from",) if name in ("move", "copy")
                   else ()):
        if needed not in op:
            raise PatchError(f"{where}: `{needed}` is missing")
    if name == "add":
        budget.change(where, added=op["value"], removed=_existing(doc, path))
        return _add(doc, path, copy.deepcopy(op["value"]), where)
    if name == "remove":
        doc, gone = _remove(doc, path, where)
        budget.change(where, removed=gone)
        return doc
    if name == "replace":
        budget.change(where, added=op["value"], removed=_get(doc, path, where))
        return _set(doc, path, copy.deepcopy(op["value"]), where)
    if name == "test":
        found = _get(doc, path, where)
        if not same(found, op["value"]):
            raise PatchError(f"{where}: test failed: the value is {_plain(found)!r}, not {op['value']!r}")
        return doc
    source = parse_pointer(op["from"], where)
    if name == "move":
        if path[:len(source)] == source and len(path) > len(source):
            raise PatchError(f"{where}: cannot move {op['from']!r} into itself")
        if path == source:
            return doc
        doc, value = _remove(doc, source, where)
        return _add(doc, path, value, where)
    value = _get(doc, source, where)
    budget.change(where, added=value, removed=_existing(doc, path))
    return _add(doc, path, copy.deepcopy(value), where)  # copy


def _existing(doc: Any, path: list[str]) -> Any:
    """What an `add` at `path` replaces: an object's member (an array's items move aside)."""
    if not path:
        return doc
    parent = doc
    for part in path[:-1]:
        if isinstance(parent, MutableMapping) and part in parent:
            parent = parent[part]
        elif isinstance(parent, MutableSequence) and part.isdigit() and int(part) < len(parent):
            parent = parent[int(part)]
        else:
            return None
    return parent.get(path[-1]) if isinstance(parent, MutableMapping) else None


def _get(doc: Any, path: list[str], where: str) -> Any:
    node = doc
    for depth, part in enumerate(path):
        node = _child(node, part, where, path[:depth + 1])
    return node


def _child(node: Any, part: str, where: str, so_far: list[str]) -> Any:
    if isinstance(node, MutableMapping):
        if part not in node:
            raise PatchError(f"{where}: no member {part!r} at {_pointer(so_far[:-1]) or 'the top'}")
        return node[part]
    if isinstance(node, MutableSequence):
        position = _index(node, part, where, so_far, allow_end=False)
        return node[position]
    raise PatchError(f"{where}: {_pointer(so_far[:-1]) or 'the document'} is a {type(node).__name__}, "
                     f"not an object or array, so it has no {part!r}")


def _index(seq: MutableSequence[Any], part: str, where: str, so_far: list[str], *, allow_end: bool) -> int:
    if part == "-" and allow_end:
        return len(seq)
    if not part.isdigit() or (part.startswith("0") and part != "0"):
        raise PatchError(f"{where}: {part!r} is not an array index (0, 1, ...{', or -' if allow_end else ''})")
    position = int(part)
    limit = len(seq) if allow_end else len(seq) - 1
    if position > limit:
        raise PatchError(f"{where}: index {position} is out of range at {_pointer(so_far[:-1]) or 'the top'} "
                         f"(the array has {len(seq)} items)")
    return position


def _add(doc: Any, path: list[str], value: Any, where: str) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1], where)
    last = path[-1]
    if isinstance(parent, MutableMapping):
        parent[last] = value
    elif isinstance(parent, MutableSequence):
        parent.insert(_index(parent, last, where, path, allow_end=True), value)
    else:
        raise PatchError(f"{where}: {_pointer(path[:-1]) or 'the document'} is not an object or array")
    return doc


def _set(doc: Any, path: list[str], value: Any, where: str) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1], where)
    if isinstance(parent, MutableSequence):
        parent[_index(parent, path[-1], where, path, allow_end=False)] = value
    else:
        parent[path[-1]] = value
    return doc


def _remove(doc: Any, path: list[str], where: str) -> tuple[Any, Any]:
    if not path:
        raise PatchError(f"{where}: cannot remove the whole document")
    parent = _get(doc, path[:-1], where)
    value = _child(parent, path[-1], where, path)
    if isinstance(parent, MutableSequence):
        del parent[int(path[-1])]
    else:
        del parent[path[-1]]
    return doc, value


def same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, key order does not count."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, MutableMapping | dict) and isinstance(b, MutableMapping | dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return str(a) == str(b)
    return a is None and b is None


def _plain(value: Any) -> Any:
    if isinstance(value, MutableMapping | dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _pointer(path: list[str]) -> str:
    return "".join("/" + pointer_token(part) for part in path)
