"""A run's or a call's input read from a file (`--input-file`): the one safe loader, strict JSON values."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from wfops.errors import RefusedError, UsageError
from wfops.jsonvalues import check_json_value
from wfops.loader.guard import looked_up


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
