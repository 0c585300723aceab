"""JSON values: naming their type (the one way every message says it), reading the JSON
users and agents give (the one strict reader), and the one rule for every value wfops
keeps, wherever it enters (`json_problem`): finite numbers, integers of at most 4,000
digits, Unicode text, string keys, at most 200 levels deep."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from wfops.errors import UsageError

#: The most digits an integer may have anywhere wfops takes one (files, arguments, node and
#: MCP outputs, reducer results): below Python's 4,300-digit limit for printing an integer,
#: so every value wfops holds can also be written out (JSON, the store, messages).
MAX_INT_DIGITS = 4000
_INT_LIMIT = 10 ** MAX_INT_DIGITS

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


# -- user JSON: one strict reader for every value a user or an agent hands wfops ---------

def parse_json(text: str, what: str, *, text_fallback: bool = False) -> Any:
    """Strict JSON, as every JSON reader outside Python reads it.

    Python's `json` also takes `NaN`, `Infinity` and numbers that overflow to them
    (`1e400`); none of those is JSON, and a stored `NaN` would make `runs show --json`
    print something no client can parse. They are refused, as is deep nesting.
    Raises `UsageError` with one line naming `what` (e.g. `--payload`). With
    `text_fallback`, text that is not JSON at all is returned as the string it is
    (`--input K=V`), but JSON that only Python reads is still refused.
    """
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=_finite_float, parse_int=_bounded_int)
    except _TooLong as exc:
        raise UsageError(f"{what}: {exc} (quote the value to pass it as a string)") from None
    except _NotFinite as exc:
        raise UsageError(f"{what}: {exc} ({_NOT_FINITE_HINT})") from None
    except ValueError as exc:
        if text_fallback:
            return text
        raise UsageError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{what} is nested too deeply") from None
    check_json_value(value, what)
    return value


def strict_json(text: str) -> Any:
    """`text` as the strict JSON `parse_json` takes, with no key twice in one object (as the
    YAML loader refuses it); `ValueError` or `RecursionError` for anything else. For large
    values a reader can afford to parse twice: it tries this, and reads anything refused
    with a reader that says where the problem is."""
    return json.loads(text, parse_constant=_not_json, parse_float=_finite_float, parse_int=_bounded_int,
                      object_pairs_hook=_unique_keys)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return value


def check_json_value(value: Any, what: str) -> None:
    """Refuse what JSON cannot carry in a value that arrived already parsed (an MCP argument, a
    YAML input file): non-finite numbers, integers too long to print, text that is not
    Unicode (lone surrogates), and values that are not JSON at all."""
    problem = json_problem(value, what)
    if problem is not None:
        raise UsageError(problem)


def json_problem(value: Any, what: str) -> str | None:
    """None when `value` is plain JSON that wfops can store and print; else one line naming
    `what` and where in it the first problem is. Every place a value enters (arguments,
    node and MCP outputs, reducer results) asks this, and turns the answer into its own
    kind of failure (a usage error, a step failure)."""
    if plain_json(value):  # the common case, without building a path for every key
        return None
    problem = _first_problem(value, "")
    if problem is None:
        return None
    where, reason = problem
    if len(where) > 120:  # deep nesting: the path alone could flood the message
        where = f"{where[:60]}...{where[-40:]}"
    return f"{what}{' at ' + where if where else ''}: {reason}"


def number_problem(value: Any) -> str | None:
    """Why a number cannot be a JSON value (non-finite, too many digits), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a JSON number"
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT_LIMIT < value < _INT_LIMIT:
        return f"an integer of more than {MAX_INT_DIGITS} digits is too long"
    return None


class _NotFinite(ValueError):
    pass


class _TooLong(_NotFinite):
    pass


_NOT_FINITE_HINT = "JSON numbers are finite; quote the value to pass it as a string"


def _not_json(name: str) -> Any:
    raise _NotFinite(f"{name!r} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotFinite(f"{text!r} is too large for a JSON number (it overflows to infinity)")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _TooLong(f"an integer of {len(text.lstrip('-'))} digits is too long (at most {MAX_INT_DIGITS})")
    return int(text)


#: Nesting past this is refused: every later step (schema checks, JSON, the store) recurses.
MAX_DEPTH = 200


def _first_problem(value: Any, where: str) -> tuple[str, str] | None:
    # Iterative: a deeply nested value must not blow the stack here either.
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int | float):
            reason = number_problem(item)
            if reason is not None:
                return at, reason
        elif isinstance(item, str):
            if not _is_unicode(item):
                return at, "the text is not valid Unicode (it holds a lone surrogate)"
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                return at, f"the value is nested more than {MAX_DEPTH} levels deep"
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        return at, f"a key is {described(key)}, not a string"
                    if not _is_unicode(key):
                        return at, "a key is not valid Unicode (it holds a lone surrogate)"
                    stack.append((sub, f"{at}.{_shown_key(key)}" if at else _shown_key(key), depth + 1))
            else:
                stack.extend((sub, f"{at}[{i}]", depth + 1) for i, sub in enumerate(item))
        else:
            return at, f"{type(item).__name__} is not a JSON value"
    return None


def json_size_over(value: Any, limit: int) -> int | None:
    """The size in bytes of `value` as the store writes it (compact UTF-8 JSON) when that is
    over `limit`, else None. A count of characters decides most values without encoding
    them: one character is at most 6 bytes of JSON (`\\u001f`), so a value whose bound is
    under the limit is under it; only the others are encoded to be measured."""
    bound = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            bound += 6 * len(item) + 2
        elif isinstance(item, dict):
            bound += 2 + 2 * len(item)
            for key, sub in item.items():
                bound += 6 * len(key) + 2
                stack.append(sub)
        elif isinstance(item, list | tuple):
            bound += 2 + len(item)
            stack.extend(item)
        else:
            bound += 24 if not isinstance(item, int) or isinstance(item, bool) else 2 + len(str(item))
        if bound > limit:
            break
    else:
        return None
    size = json_size(value)
    return size if size > limit else None


def json_size(value: Any) -> int:
    """A value's size in bytes as compact UTF-8 JSON, as the store writes it (YAML timestamps
    and other scalars as text)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8",
                                                                                               "surrogatepass"))


def pointer_token(key: Any) -> str:
    """`key` as one JSON Pointer token (RFC 6901: `~` is written `~0`, `/` is `~1`)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer_key(token: str) -> str:
    """The key one JSON Pointer token stands for (`pointer_token` undone)."""
    return token.replace("~1", "/").replace("~0", "~")


def non_finite_problem(value: Any, what: str) -> str | None:
    """`json_problem`'s words for the first NaN or infinity in `value`, a value that may hold
    other Python objects too (dates, tuples, sets: a pydantic model's python dump), or None.
    For a value about to be converted to JSON by something that would write such a number as
    null (pydantic's JSON mode does so for a field typed `Any`)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, at, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{what}{' at ' + at if at else ''}: {number_problem(item)}"
        if depth >= MAX_DEPTH:
            continue  # `json_problem` refuses the nesting itself
        if isinstance(item, dict):
            stack.extend((sub, f"{at}.{_shown_key(str(key))}" if at else _shown_key(str(key)), depth + 1)
                         for key, sub in item.items())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((sub, f"{at}[{i}]", depth + 1) for i, sub in enumerate(item))
    return None


_SAFE_BITS = 13_287  # 2**13287 < 10**4000: an integer of this many bits has at most 4,000 digits


def plain_size_bound(value: Any) -> int | None:
    """None unless `value` is `plain_json`; else a bound on its size in bytes as compact
    JSON, no lower than the one `json_size_over` reckons: `json_problem` and the size check
    in one walk, for values that are checked on every call of a fan-out's items."""
    # Only containers go on the stack, their scalars sized where they are met (a call's
    # output is mostly one object of scalars). A scalar `value` starts inside a list of its
    # own, whose two brackets and one comma the bound leaves out again.
    stack: list[tuple[Any, int]]
    if type(value) is dict or type(value) is list:
        bound, stack = 0, [(value, 0)]
    else:
        bound, stack = -3, [([value], -1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            bound += 2 + 2 * len(item)
            for key in item:
                if type(key) is not str or (not key.isascii() and not _is_unicode(key)):
                    return None
                bound += 6 * len(key) + 2
            children: Iterable[Any] = item.values()
        else:
            bound += 2 + len(item)
            children = item
        deeper = depth + 1
        for sub in children:
            kind = type(sub)
            if kind is str:
                if not sub.isascii() and not _is_unicode(sub):
                    return None
                bound += 6 * len(sub) + 2
            elif kind is int:
                bits = sub.bit_length()
                if bits > _SAFE_BITS:
                    return None
                bound += 3 + bits // 3  # a digit takes more than 3 bits; and a sign
            elif kind is dict or kind is list:
                if deeper >= MAX_DEPTH:
                    return None
                stack.append((sub, deeper))
            elif kind is float:
                if not math.isfinite(sub):
                    return None
                bound += 24
            elif kind is bool or sub is None:
                bound += 24
            else:
                return None
    return bound


def plain_json(value: Any) -> bool:
    """True when `value` is certainly plain JSON `json_problem` passes, built of exactly `str`,
    `int`, finite `float`, `bool`, None, `list` and `dict` with `str` keys (no tuples, no
    subclasses); False does not mean it is not JSON, only that it is not that. The size
    bound's walk (one owner of what "plain" means): its sum is a few additions per node."""
    return plain_size_bound(value) is not None


def _shown_key(key: str) -> str:
    # A path in a message: a hostile key must not flood it or carry a lone surrogate.
    return key if len(key) <= 64 and _is_unicode(key) else key[:61].encode("utf-8", "replace").decode() + "..."


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`: mappings merge key by key at every depth; any other value replaces."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
