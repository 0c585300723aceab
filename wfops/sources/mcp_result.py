"""Turn an MCP tool result into a wfops call result.

- `is_error` is a step failure: `CapabilityError` with the tool's own text.
- A tool with an output schema: its `structured_content` is the output.
- A tool without one: the output is `{"result": <text>}`, the text blocks joined by
  newlines; text that is a whole JSON object or array is parsed (servers written
  before structured output return their dicts that way), any other text stays a
  string, so "42" is never silently turned into a number. Non-text blocks (images,
  resources) are kept under `content` as the protocol's JSON.
"""

from __future__ import annotations

import json
from typing import Any

from wfops.errors import CapabilityError
from wfops.redact import mask
from wfops.sources.base import CallResult
from wfops.sources.contract import split_undeclared


def convert_result(source_id: str, tool: str, result: Any, *, structured: bool,
                   declared: Any = None) -> CallResult:
    """`declared`: the `properties` of the tool's output schema; structured keys it does not
    name are extras (kept in the trace, never in state)."""
    if result.is_error:
        # The Python SDK prefixes a tool's own message with this; the source and tool are named already.
        text = _text(result).removeprefix(f"Error executing tool {tool}: ").strip()
        text = text or "the tool reported an error without a message"
        raise CapabilityError(mask(f"mcp tool {source_id}.{tool} failed: {text}"))  # the server's words
    if structured:
        if not isinstance(result.structured_content, dict):
            raise CapabilityError(f"mcp tool {source_id}.{tool} declares an output schema "
                                  "but returned no structured content")
        return CallResult("ok", *split_undeclared(dict(result.structured_content), declared, _meta_of(result)))
    output: dict[str, Any] = {"result": _maybe_json(_text(result))}
    others = [block.model_dump(mode="json", by_alias=True, exclude_none=True)
              for block in result.content if getattr(block, "type", None) != "text"]
    if others:
        output["content"] = others
    return CallResult("ok", output, _meta_of(result))


def _meta_of(result: Any) -> dict[str, Any] | None:
    """The result's `_meta`, as extra data for the trace (undeclared structured keys join it
    in the contract check)."""
    meta = getattr(result, "meta", None)
    return {"_meta": meta} if isinstance(meta, dict) and meta else None


def tool_error_text(exc: Any) -> str:
    return str(getattr(exc, "message", None) or exc)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text
