"""Assemble a run's input and secrets from the deployment, files, flags and the environment.

Precedence, lowest first: deployment `input` defaults < `--input-file` < `--input K=V`.
Mappings merge key by key at every depth; any other value replaces. `--input a.b=1`
sets the nested key `b` of `a` (a key that itself contains a dot cannot be set this
way: use `--input-file`). `V` is parsed as JSON when it parses, else kept as a string.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wfops.errors import RefusedError, UsageError


def parse_assignments(pairs: Iterable[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise UsageError(f"--input {pair!r}: expected KEY=VALUE (KEY may be dotted: a.b=1)")
        value = _json_or_string(text)
        nested: Any = value
        for part in reversed(parts):
            nested = {part: nested}
        result = merge(result, nested)
    return result


def _json_or_string(text: str) -> Any:
    # Strict JSON: Python's parser also takes NaN, Infinity and 1e400 (inf), which no JSON
    # reader accepts and which would make `std.sleep` wait forever; those stay strings.
    try:
        return json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except ValueError:
        return text
    except RecursionError:
        raise UsageError("--input value is nested too deeply") from None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


def read_input_file(path: str | Path) -> dict[str, Any]:
    """A JSON or YAML mapping, read with the safe loader (JSON is YAML); `-` reads stdin."""
    import sys

    from wfops.loader.yaml import YamlLoadError, load_yaml_file, load_yaml_text

    file = Path(path)
    if str(path) != "-" and not file.is_file():
        raise UsageError(f"--input-file {path}: no such file")
    try:
        if str(path) == "-":
            try:
                text = sys.stdin.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"--input-file -: cannot read stdin: {exc}") from None
            data = load_yaml_text(text, "<stdin>").data
        else:
            data = load_yaml_file(file, str(path)).data
    except YamlLoadError as exc:
        d = exc.diagnostic
        # JSON is YAML, so one safe loader reads both; a .json file's errors say JSON.
        problem = f"not valid JSON: {d.message}" if file.suffix == ".json" else d.message
        raise RefusedError(f"--input-file {path}:{d.line}:{d.column}: {problem}",
                           diagnostics=[d]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RefusedError(f"--input-file {path}: the input must be a mapping, not {type(data).__name__}")
    return data


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_secrets(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every declared secret from the environment; a missing one refuses the run."""
    env = os.environ if environ is None else environ
    names = list(names)
    missing = [n for n in names if n not in env]
    if missing:
        raise RefusedError(f"secret {', '.join(missing)} is not set in the environment",
                           hint="export it before `wfops run` (secrets are read from env vars, never stored)")
    return {n: env[n] for n in names}
