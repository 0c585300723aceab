"""`wfops compile [--out DIR]`: validate, snapshot contracts, write wfops.lock."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from wfops.cli.output import print_json, say, warn


def run(*, out: str | None, format: str, project: str | None) -> int:
    from wfops.compiler.validate import validate_project
    from wfops.errors import WfopsError
    from wfops.loader.project import find_root
    from wfops.lock.build import compile_project
    from wfops.lock.drift import EVERYTHING, pin_mismatches
    from wfops.lock.lockfile import read_lock, write_lock
    from wfops.lock.summary import lock_changes
    from wfops.report import FORMATS, render

    if format not in FORMATS:
        from wfops.errors import UsageError

        raise UsageError(f"unknown format {format!r}", hint="use one of: " + ", ".join(FORMATS))
    root = find_root(explicit=project)
    out_dir = _out_directory(out) if out else None  # refused before anything is written
    validation = validate_project(root, live=True)  # compile is where MCP contracts get snapshotted
    if not validation.ok:
        render(validation.diagnostics, format, sys.stdout, root)
        warn("wfops compile: not written: fix the errors above first")
        return 1
    compiled = compile_project(validation)
    # A lock whose deployment pins another artifact would fail `wfops check` at once.
    refused = pin_mismatches(validation, compiled, EVERYTHING)
    if refused:
        render([*validation.diagnostics, *refused], format, sys.stdout, root)
        warn("wfops compile: not written: fix the errors above first")
        return 1
    lock = compiled.to_lock()
    try:
        previous = read_lock(root)
    except WfopsError:
        previous = None  # a corrupt lock is exactly what compile repairs
    write_lock(root, lock)
    written = write_artifacts(out_dir, compiled) if out_dir else []
    changes = lock_changes(previous, lock) if previous != lock else []
    diagnostics = [d for d in validation.diagnostics if not d.is_error] + compiled.diagnostics
    if format == "json":
        print_json({"ok": True, "lock": "wfops.lock", "changed": bool(changes), "changes": changes,
                    "workflows": {n: e["hash"] for n, e in compiled.workflows.items()},
                    "artifacts": written, "diagnostics": [d.to_dict() for d in diagnostics]})
        return 0
    if diagnostics:
        render(diagnostics, format, sys.stdout, root)
    report = say if format == "text" else warn
    contracts = sum(len(s["capabilities"]) for s in lock["sources"].values())
    report(f"wrote wfops.lock: {_count(len(lock['workflows']), 'workflow')}, "
           f"{_count(len(lock['deployments']), 'deployment')}, {_count(contracts, 'capability contract')}")
    for line in changes or ["unchanged"]:
        report(f"  {line}")
    for path in written:
        report(f"  artifact {path}")
    return 0


def _out_directory(out: str) -> Path:
    """`--out DIR`, created if needed; a path that cannot be a directory is a usage error."""
    from wfops.errors import UsageError

    directory = Path(out)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--out {out}: not a directory", hint="give a directory path")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the directory ({exc.strerror or exc})",
                         hint="give a directory path that is writable") from None
    return directory


def write_artifacts(directory: Path, compiled: Any) -> list[str]:
    """One `<name>.json` per workflow: its normalized form, hash and subworkflow hashes."""
    from wfops.lock.lockfile import dump_lock

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, entry in compiled.workflows.items():
        path = directory / f"{name}.json"
        body = {"name": name, "hash": entry["hash"], "workflow": entry["normalized"],
                "subworkflows": entry["subworkflows"]}
        path.write_text(dump_lock(body), encoding="utf-8", newline="\n")
        written.append(path.as_posix())
    return written


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
