"""A run's or a call's input read from a file (`--input-file`): the one safe loader, strict JSON values."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from wfops.errors import RefusedError, UsageError
from wfops.jsonvalues import check_json_value, strict_json
from wfops.loader.guard import looked_up

#: The largest input file: JSON up to this size is read by Python's C JSON parser (a million
#: items take about a second); a YAML file, or JSON with a problem to point at, goes through
#: the YAML loader and its limits (docs/file-safety.md).
MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_input_file(path: str, flag: str) -> dict[str, Any]:
    """A JSON or YAML mapping, read with the safe loader (JSON is YAML); `-` reads stdin."""
    # deferred: record-hit path; only `--input-file` reads YAML
    from wfops.loader.yaml import YamlLoadError, load_yaml_text

    file = looked_up(path, what=flag) if path != "-" else Path(path)
    if path != "-" and not file.is_file():
        raise UsageError(f"{flag} {path}: no such file")
    text = _read_text(file, path, flag)
    try:
        data = strict_json(text)
    except (ValueError, RecursionError):  # not plain JSON: the YAML loader reads it, or says where it breaks
        try:
            data = load_yaml_text(text, "<stdin>" if path == "-" else path).data
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


def _read_text(file: Path, path: str, flag: str) -> str:
    """The file (or stdin) as text, at most `MAX_INPUT_BYTES`. A file that cannot be read
    or is not UTF-8 is refused with the YAML loader's diagnostic for it."""
    # deferred: record-hit path; only `--input-file` reads YAML
    from wfops.loader.yaml import YamlLoadError, load_yaml_bytes, load_yaml_file

    if path == "-":
        try:
            text = sys.stdin.read(MAX_INPUT_BYTES + 1)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{flag} -: cannot read stdin: {exc}") from None
        if len(text) > MAX_INPUT_BYTES:
            raise _too_large(flag, path)
        return text
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_INPUT_BYTES + 1)
        if len(raw) > MAX_INPUT_BYTES:
            raise _too_large(flag, path)
        return raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        try:  # the loader says what is wrong, and where: the first byte that is not UTF-8
            if isinstance(exc, OSError):
                load_yaml_file(file, path)
            else:
                load_yaml_bytes(raw[: exc.start + 4], path)
        except YamlLoadError as refused:
            d = refused.diagnostic
            raise RefusedError(f"{flag} {path}:{d.line}:{d.column}: {d.message}", diagnostics=[d]) from None
        raise UsageError(f"{flag} {path}: cannot be read ({exc})") from None


def _too_large(flag: str, path: str) -> RefusedError:
    return RefusedError(f"{flag} {path}: larger than {MAX_INPUT_BYTES:,} bytes, the most an input file may hold",
                        hint="pass large data by reference (a path or URL the workflow reads) instead")
