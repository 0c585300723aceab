"""Read and write `wfops.lock`: deterministic JSON, identical bytes on any machine.

Format (version 1), all keys sorted:

    {
      "version": 1,
      "workflows":   {name: {"file", "hash", "requires": {uses-ref: contract hash}, "subworkflows": {name: hash}}},
      "deployments": {name: {"file", "workflow", "artifact", "bindings", "drift", "secrets"}},
      "sources":     {id: {"kind", "capabilities": {name: {"input_schema", "output_schema",
                                                          "outcomes", "description", "hash"}}}}
    }
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError

LOCK_NAME = "wfops.lock"
LOCK_VERSION = 1


def lock_path(root: Path) -> Path:
    return Path(root) / LOCK_NAME


def read_lock(root: Path) -> dict | None:
    """The parsed lock of the project at `root`, or None when there is none.

    A lock that is not valid JSON or has the wrong shape raises WfopsError: a
    corrupt lock must never be mistaken for "no lock".
    """
    path = lock_path(root)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise WfopsError(f"{LOCK_NAME} is corrupt: {exc}",
                         hint="restore it from git, or run `wfops compile` to write it again") from exc
    problem = _shape_problem(data)
    if problem:
        raise WfopsError(f"{LOCK_NAME} is corrupt: {problem}",
                         hint="restore it from git, or run `wfops compile` to write it again")
    return data


def _shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "the top level is not a JSON object"
    version = data.get("version")
    if version != LOCK_VERSION:
        return f"unsupported lock version {version!r} (this wfops reads version {LOCK_VERSION})"
    for section in ("workflows", "deployments", "sources"):
        table = data.get(section, {})
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            return f"`{section}` is not an object of objects"
    for source_id, source in data.get("sources", {}).items():
        caps = source.get("capabilities", {})
        if not isinstance(caps, dict) or not all(isinstance(v, dict) for v in caps.values()):
            return f"sources.{source_id}.capabilities is not an object of objects"
    return None


def dump_lock(lock: dict) -> str:
    """The exact bytes written: sorted keys, indent 2, trailing newline, no timestamps."""
    return json.dumps(lock, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_lock(root: Path, lock: dict) -> Path:
    """Write atomically, so a crash never leaves half a lock behind."""
    path = lock_path(root)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_lock(lock), encoding="utf-8", newline="\n")
    tmp.replace(path)
    return path
