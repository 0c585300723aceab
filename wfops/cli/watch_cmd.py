"""`wfops watch [--run DEPLOYMENT]`: revalidate (and rerun) on every change.

Watched: `sources.yaml`, `wfops.lock`, `workflows/` and `deployments/` YAML, and
every `.py` file of the project (python sources are dropped from `sys.modules`
before each pass, so edits take effect without a restart). Changes are debounced:
a burst of saves gives one pass. `.wfops/`, `.git/`, virtualenvs and caches are ignored.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchfiles import watch

from wfops.api import Project
from wfops.cli import run_cmd
from wfops.cli.output import say
from wfops.crashlog import report_crash
from wfops.errors import WfopsError
from wfops.report import render

DEBOUNCE_MS = 300
_IGNORED_DIRS = {".wfops", ".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache",
                 ".pytest_cache", ".ruff_cache", ".tox", "site-packages"}

Handler = Callable[[set[str]], Any]


def run(*, deployment: str | None = None, project: str | None = None, db: str | None = None,
        unlocked: bool = False) -> int:
    root = Project(project).root
    say(f"watching {root} (Ctrl-C to stop)")
    try:
        watch_loop(root, lambda changed: one_pass(root, changed, deployment=deployment, db=db, unlocked=unlocked))
    except KeyboardInterrupt:
        say("stopped")
    return 0


def is_watched(root: Path, path: str | Path) -> bool:
    """Does a change to `path` call for a new pass?"""
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    if any(part in _IGNORED_DIRS for part in rel.parts[:-1]):
        return False
    if rel.suffix == ".py":
        return True
    if rel.as_posix() in ("sources.yaml", "wfops.lock"):
        return True
    return len(rel.parts) == 2 and rel.parts[0] in ("workflows", "deployments") and rel.suffix in (".yaml", ".yml")


def watch_loop(root: Path, handle: Handler, *, stop_event: threading.Event | None = None,
               max_passes: int | None = None, debounce_ms: int = DEBOUNCE_MS) -> int:
    """Call `handle(set())` once, then `handle(changed_paths)` after each debounced burst of
    relevant changes, until `stop_event` is set or `max_passes` change-passes ran.
    Returns the number of change-passes (the seam tests drive)."""
    handle(set())
    passes = 0
    for changes in watch(root, watch_filter=lambda _, path: is_watched(root, path), debounce=debounce_ms,
                         stop_event=stop_event, rust_timeout=500, yield_on_timeout=False,
                         raise_interrupt=True):
        changed = {Path(path).resolve().relative_to(root.resolve()).as_posix() for _, path in changes}
        handle(changed)
        passes += 1
        if max_passes is not None and passes >= max_passes:
            break
    return passes


def one_pass(root: Path, changed: set[str], *, deployment: str | None = None, db: str | None = None,
             stream: Any = None, unlocked: bool = False) -> bool:
    """Revalidate (python sources reloaded), print the findings, rerun when clean. True when valid."""

    out = stream or sys.stdout
    started = time.perf_counter()
    stamp = time.strftime("%H:%M:%S")
    what = ", ".join(sorted(changed)[:3]) + (" …" if len(changed) > 3 else "") if changed else "start"
    out.write(f"\n[{stamp}] {what}\n")
    project = Project(root, db=db)
    try:
        report = project.validate()
    except WfopsError as exc:
        out.write(f"wfops: error: {exc.message}\n")
        return False
    except Exception as exc:  # a bug must not end a watch session: say so and keep watching
        report_crash(exc)
        return False
    render(report.diagnostics, "text", out)
    out.write(f"validated in {(time.perf_counter() - started) * 1000:.0f} ms\n")
    out.flush()
    if deployment and report.ok:
        _rerun(root, deployment, db, out, unlocked=unlocked)
    return report.ok


def _rerun(root: Path, deployment: str, db: str | None, out: Any, *, unlocked: bool = False) -> None:
    try:
        code = run_cmd.run(deployment=deployment, inputs=[], input_file=None, json_out=False,
                           project=str(root), db=db, unlocked=unlocked)
        out.write(f"run of {deployment} exited {code}\n")
    except WfopsError as exc:  # refused or broken: report it and keep watching
        out.write(f"wfops: error: {exc.message}\n" + (f"  hint: {exc.hint}\n" if exc.hint else ""))
    except Exception as exc:  # user code in a python source: keep watching
        out.write(f"run of {deployment} crashed: {type(exc).__name__}: {exc}\n")
    out.flush()
