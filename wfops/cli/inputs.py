"""What the run verbs read from their flags: `--input K=V`, `--input-file F`, `--payload JSON`.

Precedence, lowest first: deployment `input` defaults < `--input-file` < `--input K=V`
(the deployment's part is the core's: `Project.run` merges `input` over it).
Mappings merge key by key at every depth; any other value replaces. `--input a.b=1`
sets the nested key `b` of `a`. `V` is read as JSON when it is JSON, else kept as a
string; JSON that no other reader accepts (`NaN`, `Infinity`, `1e400`) is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wfops.errors import RefusedError, UsageError
from wfops.jsonvalues import check_json_value, deep_merge, parse_json
from wfops.loader.guard import looked_up


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


def read_input_file(path: str, flag: str) -> dict[str, Any]:
    """A JSON or YAML mapping, read with the safe loader (JSON is YAML); `-` reads stdin."""
    # deferred: record-hit path; only `--input-file` reads YAML
    from wfops.loader.yaml import YamlLoadError, load_yaml_file, load_yaml_text

    file = looked_up(path, what=flag) if path != "-" else Path(path)
    if path != "-" and not file.is_file():
        raise UsageError(f"{flag} {path}: no such file")
    try:
        if path == "-":
            try:
                text = sys.stdin.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"{flag} -: cannot read stdin: {exc}") from None
            data = load_yaml_text(text, "<stdin>").data
        else:
            data = load_yaml_file(file, path).data
    except YamlLoadError as exc:
        d = exc.diagnostic
        # JSON is YAML, so one safe loader reads both; a .json file's errors say JSON.
        problem = f"not valid JSON: {d.message}" if file.suffix == ".json" else d.message
        raise RefusedError(f"{flag} {path}:{d.line}:{d.column}: {problem}", diagnostics=[d]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RefusedError(f"{flag} {path}: the input must be a mapping, not {type(data).__name__}")
    check_json_value(data, f"{flag} {path}")
    return data
