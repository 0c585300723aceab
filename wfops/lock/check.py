"""`check` as a plain function: every validation finding plus every lock difference."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from wfops.compiler.validate import validate_project
from wfops.diagnostics import Diagnostic, error, sort_key
from wfops.errors import WfopsError
from wfops.lock.build import compile_project
from wfops.lock.drift import compare
from wfops.lockfile import LOCK_NAME, lock_path, read_lock


def check_project(root: Path, *, live: bool = False) -> list[Diagnostic]:
    validation = validate_project(root, live=live)
    # In `check` a contract the lock does not hold is an error: CI cannot vouch for it.
    found = [replace(d, severity="error") if d.code == "contract-unknown" else d
             for d in validation.diagnostics]
    try:
        lock = read_lock(root)
    except WfopsError as exc:
        return _unique(found + [error("corrupt-lock", exc.message, LOCK_NAME, hint=exc.hint)])
    text = lock_path(root).read_text(encoding="utf-8") if lock is not None else None
    compiled = compile_project(validation)
    found += compare(validation, compiled, lock, text)
    return _unique(found)


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for d in sorted(diagnostics, key=sort_key):
        key = (d.code, d.file, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            kept.append(d)
    return kept
