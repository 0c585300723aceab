"""The scheduled GitHub Actions workflow: written by `wfops init`, refreshed by `wfops ci
schedule`, reported stale by `wfops check`.

GitHub's `on: schedule` is UTC only and best-effort (a run often starts minutes late, and
may be dropped under load), so the workflow does not copy the deployments' crons: it
ticks every few minutes and lets `wfops schedule tick` decide what is due, in each
entry's own time zone, catching up within its window. It carries the schedules it was
written for (a comment per entry and their digest), so a changed schedule makes it stale.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from wfops.api.install_spec import install_spec
from wfops.api.scaffold_repo import ci_path, git_root
from wfops.atomic import write_atomic
from wfops.canonical import sha256_of
from wfops.diagnostics import Diagnostic, error
from wfops.loader.project import load_project
from wfops.sources.modules import note_consulted

#: How often the generated workflow ticks (GitHub runs a schedule at most every 5 minutes).
TICK_CRON = "*/5 * * * *"
_DIGEST = re.compile(r"^# schedule-digest: ([0-9a-f]+)\s*$", re.MULTILINE)
_SPEC = re.compile(r"^      WFOPS_PIP: (\".*\")\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ScheduleWorkflow:
    path: Path      # where it goes, at the repository root's .github/workflows/
    shown: str      # that path as the user names it (relative to the repository root)
    text: str
    digest: str     # of the schedules it was written for
    written: bool = False  # `refresh`: the file was (re)written, not already up to date

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.shown, "digest": self.digest, "written": self.written}


def schedule_workflow(root: Path, *, project: str | None = None) -> ScheduleWorkflow:
    """The workflow for the project at `root` (`project`: its path below the repository root,
    default found from `.git`), from its deployments' schedules. It installs wfops as the
    workflow already there does (what `wfops init --wfops-spec` chose), else as this wfops
    was installed."""
    base = git_root(root) or root.resolve()
    where = project if project is not None else root.resolve().relative_to(base).as_posix()
    lines, digest = _schedules(root)
    shown = workflow_path(where)
    current = base / shown
    spec = _spec_of(current.read_text(encoding="utf-8", errors="replace")) if current.is_file() else None
    return ScheduleWorkflow(current, shown, _text(lines, digest, where, spec or install_spec()), digest)


def workflow_path(project: str) -> str:
    """Beside the project's CI workflow: `wfops.schedule.yml`, `wfops-<subdir>.schedule.yml`."""
    return ci_path(project).removesuffix(".yml") + ".schedule.yml"


def unscheduled(project: str, spec: str) -> tuple[str, str]:
    """(path, text) of the workflow of a project whose deployments have no schedule yet (`init`;
    `spec`: the pip requirement its CI installs wfops with)."""
    return workflow_path(project), _text([], sha256_of([])[:16], project, spec)


def refresh(root: Path) -> ScheduleWorkflow:
    """Write the workflow, unless the file there was written for the same schedules."""
    found = schedule_workflow(root)
    current = found.path.read_text(encoding="utf-8", errors="replace") if found.path.is_file() else None
    if current is not None and _digest_of(current) == found.digest:
        return found  # same schedules: keep the file (its install line may differ per machine)
    found.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(found.path, found.text)
    return replace(found, written=True)


def stale_findings(root: Path) -> list[Diagnostic]:
    """`stale-schedule-workflow` when the workflow exists and was written for other schedules."""
    base = git_root(root) or root.resolve()
    found_path = base / workflow_path(root.resolve().relative_to(base).as_posix())
    # What this answer read, for the check record's key (as an import's files are): the
    # workflow file (or its absence) and whether its folder exists.
    note_consulted(root, [os.path.relpath(found_path, root.resolve()),
                          os.path.relpath(found_path.parent, root.resolve()) + "/"])
    if not any((base / ".github" / "workflows").glob("*.schedule.yml")):
        return []  # no scheduled workflow (cron, a timer or a cluster may tick instead): nothing loaded
    found = schedule_workflow(root)
    if not found.path.is_file():
        return []
    written = _digest_of(found.path.read_text(encoding="utf-8", errors="replace"))
    if written == found.digest:
        return []
    shown = found.path.relative_to(root.resolve()).as_posix() if found.path.is_relative_to(root.resolve()) \
        else str(found.path)
    return [error("stale-schedule-workflow", f"{found.shown} was written for other schedules than the "
                  "deployments' (a `schedule:` changed since)", shown, (1, 1),
                  "run `wfops ci schedule` and commit the workflow")]


def _digest_of(text: str) -> str | None:
    found = _DIGEST.search(text)
    return found.group(1) if found else None


def _schedules(root: Path) -> tuple[list[str], str]:
    project = load_project(root)
    lines, data = [], []
    for name in sorted(project.deployments):
        for entry in project.deployments[name].model.schedule:
            lines.append(f"#   {name}: {' '.join(entry.cron.split())} ({entry.timezone})"
                         + ("" if entry.enabled else " disabled"))
            data.append([name, entry.to_data()])
    return lines, sha256_of(data)[:16]


def _spec_of(text: str) -> str | None:
    """The pip requirement a written workflow installs wfops with (its `WFOPS_PIP`)."""
    found = _SPEC.search(text)
    if found is None:
        return None
    try:
        spec = json.loads(found.group(1))
    except ValueError:
        return None
    return spec if isinstance(spec, str) and spec.strip() else None


def _setup_steps() -> str:
    """The checkout and Python steps, as the scaffold's CI workflow writes them (one place
    names the actions and their versions)."""
    template = (resources.files("wfops") / "scaffold" / "project" / "dot-github" / "workflows" / "wfops.yml")
    steps = [line for line in template.read_text(encoding="utf-8").splitlines()
             if line.strip().startswith(("- uses: actions/checkout@", "- uses: actions/setup-python@"))]
    return "\n".join(steps)


def _text(lines: list[str], digest: str, project: str, spec: str) -> str:
    trigger = (f'  schedule:\n    - cron: "{TICK_CRON}"   # UTC, best-effort: `wfops schedule tick` decides\n'
               if lines else "")
    listed = "\n".join(lines) if lines else "#   (none yet: add `schedule:` to a deployment, then run `wfops ci schedule`)"
    return f"""# Written by `wfops ci schedule` from the deployments' schedules; `wfops check` reports it
# stale when a schedule changes. Regenerate it rather than editing it.
# Each tick starts the runs due then, once per slot: the slot is claimed in the shared store.
# A job's checkout is new every time, so WFOPS_DB must name a shared PostgreSQL store (a
# repository secret); without it every tick would forget what the last one started.
# Schedules:
{listed}
# schedule-digest: {digest}
name: wfops schedule
on:
{trigger}  workflow_dispatch:
permissions:
  contents: read
concurrency:
  group: {workflow_path(project).rsplit("/", 1)[-1].removesuffix(".yml")}
  cancel-in-progress: false
jobs:
  tick:
    runs-on: ubuntu-latest
    timeout-minutes: 60
    env:
      WFOPS_PIP: {json.dumps(spec)}
      WFOPS_DB: ${{{{ secrets.WFOPS_DB }}}}
    defaults:
      run:
        working-directory: {json.dumps(project)}
    steps:
{_setup_steps()}
        with:
          python-version: "3.11"
      - run: python -m pip install "$WFOPS_PIP" "psycopg[binary]>=3.1"
      - name: Refuse a store that would not be shared
        run: |
          case "$WFOPS_DB" in postgres://*|postgresql://*) ;; *)
            echo "::error::set the repository secret WFOPS_DB to a postgresql:// URL"; exit 1;; esac
      - run: wfops schedule tick --json
"""
