"""The stdio wire in front of the SDK: every line a client sends gets an answer.

The SDK's stdio reader drops a line it cannot parse (its exception goes nowhere a client
sees), so a request carrying a 5,000-digit integer, a lone `\\ud800` escape or 5,000 levels of
nesting left its client waiting forever. Here each line is read (at most `MAX_LINE` bytes)
and checked as the SDK will parse it, and parsed as Python's `json` does; one that fails is
answered at once with a JSON-RPC error (`-32700` parse error, `-32600` invalid request)
carrying the request's id where one can be read, and never reaches the SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

#: The longest message line read (bytes); a longer one is answered as too large and skipped.
MAX_LINE = 16 * 1024 * 1024
#: The deepest nesting of arrays and objects a message may have.
MAX_DEPTH = 256
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\\x00-\x1f]|\\[^u]){0,200}")')


class GuardedStdin:
    """An async iterator of the message lines the SDK may parse; the others are answered here."""

    def __init__(self, wire: BinaryIO) -> None:
        self.wire = wire
        self.replies: Any = None  # the session's write stream, set once serving starts
        self._early: list[SessionMessage] = []

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            line = await anyio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
            if line is None:
                return
            if not line.strip():
                continue
            problem = refusal(line)
            if problem is None:
                yield line.decode("utf-8")
            else:
                await self._answer(problem)

    def _read_line(self) -> bytes | None:
        line = self.wire.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            head = line[:4096]
            while line and not line.endswith(b"\n"):  # skip the rest of the message
                line = self.wire.readline(MAX_LINE)
            return b"\x00too-large\x00" + head
        return line

    async def _answer(self, error: types.JSONRPCError) -> None:
        message = SessionMessage(error)
        if self.replies is None:
            self._early.append(message)
            return
        for early in self._early:
            await self.replies.send(early)
        self._early.clear()
        await self.replies.send(message)


def refusal(line: bytes) -> types.JSONRPCError | None:
    """The error that answers `line`, or None when the SDK may have it."""
    if line.startswith(b"\x00too-large\x00"):
        return _error(line, types.INVALID_REQUEST, f"the message is larger than {MAX_LINE} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _error(line, types.PARSE_ERROR, "the message is not UTF-8")
    depth = _depth(text)
    if depth > MAX_DEPTH:
        return _error(line, types.INVALID_REQUEST, f"the message nests deeper than {MAX_DEPTH} levels")
    try:
        json.loads(text)  # Python's own limits: integers of more than 4300 digits, ...
    except (ValueError, RecursionError) as exc:
        return _error(line, types.PARSE_ERROR, f"the message is not valid JSON: {_short(exc)}")
    if "\\ud" in text.lower() and _lone_surrogate(text):
        return _error(line, types.PARSE_ERROR, "the message holds a lone surrogate escape (\\ud800-\\udfff), "
                                               "which is no character")
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:  # noqa: BLE001 - whatever the SDK would drop, answered here
        return _error(line, types.INVALID_REQUEST, f"the message is not a JSON-RPC 2.0 message: {_short(exc)}")
    return None


def _depth(text: str) -> int:
    """The deepest nesting of `[`/`{` outside strings (counted without parsing)."""
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        if bracket.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _lone_surrogate(text: str) -> bool:
    def walk(value: Any) -> bool:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
            return False
        if isinstance(value, dict):
            return any(walk(k) or walk(v) for k, v in value.items())
        if isinstance(value, list):
            return any(walk(v) for v in value)
        return False
    return walk(json.loads(text))


def _error(line: bytes, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=_request_id(line), error=types.ErrorData(code=code, message=message))


def _request_id(line: bytes) -> int | str | None:
    """The request's id as far as it can be read from a line that does not parse."""
    found = _ID.search(line[:65536])
    if found is None:
        return None
    raw = found.group(1)
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200]


def claim_stdin() -> BinaryIO:
    """The protocol's stdin as a private descriptor; fd 0 then reads the null device, so project
    code (a python node) never reads the client's messages."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(private, "rb", closefd=False)
