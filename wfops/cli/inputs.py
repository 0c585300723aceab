"""What the run verbs read from their flags: `--input K=V`, `--input-file F`, `--payload JSON`.

Precedence, lowest first: deployment `input` defaults < `--input-file` < `--input K=V`
(the deployment's part is the core's: `Project.run` merges `input` over it).
Mappings merge key by key at every depth; any other value replaces. `--input a.b=1`
sets the nested key `b` of `a`. `V` is read as JSON when it is JSON, else kept as a
string; JSON that no other reader accepts (`NaN`, `Infinity`, `1e400`) is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wfops.api.inputs import read_input_file
from wfops.errors import UsageError
from wfops.jsonvalues import check_json_value, deep_merge, parse_json


def run_input(assignments: Iterable[str], input_file: str | None) -> dict[str, Any]:
    overrides = read_input_file(input_file, "--input-file") if input_file else {}
    return deep_merge(overrides, parse_assignments(assignments))


def parse_assignments(pairs: Iterable[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise UsageError(f"--input {pair!r}: expected KEY=VALUE (KEY may be dotted: a.b=1)")
        value = parse_json(text, f"--input {key.strip()}", text_fallback=True)
        check_json_value(value, f"--input {key.strip()}")  # a plain string may hold a lone surrogate
        nested: Any = value
        for part in reversed(parts):
            nested = {part: nested}
        result = deep_merge(result, nested)
    return result


def parse_payload(text: str | None) -> Any:
    return None if text is None else parse_json(text, "--payload")
