"""`compile`: validate with live MCP contracts, snapshot them, write wfops.lock (and artifacts)."""

from __future__ import annotations

from pathlib import Path

from wfops.api.results import CompileReport
from wfops.atomic import write_atomic
from wfops.compiler.validate import validate_project
from wfops.errors import UsageError, WfopsError
from wfops.lock.build import compile_project
from wfops.lock.drift import EVERYTHING, pin_mismatches
from wfops.lock.summary import lock_changes
from wfops.lockfile import dump_lock, read_lock, write_lock
from wfops.runner.gate_record import save_compiled


def compile_lock(root: Path, out: str | Path | None) -> CompileReport:
    out_dir = _out_directory(out) if out is not None else None  # refused before anything is written
    validation = validate_project(root, live=True)  # compile is where MCP contracts get snapshotted
    deployments = sorted(validation.project.deployments)
    if not validation.ok:
        return CompileReport(False, validation.diagnostics, deployments=deployments)
    compiled = compile_project(validation)
    # A lock whose deployment pins another artifact would fail `wfops check` at once.
    refused = pin_mismatches(validation, compiled, EVERYTHING)
    if refused:
        return CompileReport(False, [*validation.diagnostics, *refused], deployments=deployments)
    lock = compiled.to_lock()
    try:
        previous = read_lock(root)
    except WfopsError:
        previous = None  # a corrupt lock is exactly what compile repairs
    write_lock(root, lock)
    save_compiled(root, validation, compiled)  # the first run after compile starts from its gate record
    written: list[str] = []
    if out_dir is not None:
        for name, entry in compiled.workflows.items():
            path = out_dir / f"{name}.json"
            body = {"name": name, "hash": entry["hash"], "workflow": entry["normalized"],
                    "subworkflows": entry["subworkflows"]}
            write_atomic(path, dump_lock(body))
            written.append(path.as_posix())
    kept = [d for d in validation.diagnostics if not d.is_error] + list(compiled.diagnostics)
    return CompileReport(
        True, kept, changes=lock_changes(previous, lock),
        workflows={n: e["hash"] for n, e in compiled.workflows.items()}, artifacts=written,
        deployments=deployments, contracts=sum(len(s["capabilities"]) for s in lock["sources"].values()))


def _out_directory(out: str | Path) -> Path:
    """`out=DIR`, created if needed; a path that cannot be a directory is a usage error."""
    directory = Path(out)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--out {out}: not a directory", hint="give a directory path")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the directory ({exc.strerror or exc})",
                         hint="give a directory path that is writable") from None
    return directory

