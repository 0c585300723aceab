"""The recipes of docs/schedules.md work as written: the crontab line and the systemd
service's command tick a real project, the systemd units pass `systemd-analyze verify`,
the CronJob passes the Kubernetes schema, and the generated GitHub workflow passes
GitHub's workflow schema (and goes stale when a schedule changes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from cronsim import CronSim

from tests.api.test_schedules import project
from tests.harness import REPO, process_env, run_cli
from wfops.api import Project

DOC = (REPO / "docs" / "schedules.md").read_text(encoding="utf-8")
PLACE = "/srv/my-project"


def recipe(first_line: str) -> str:
    """The fenced block of the doc whose first line is `first_line`."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", DOC, flags=re.DOTALL):
        if block.startswith(first_line + "\n"):
            return block
    raise AssertionError(f"no block starting {first_line!r} in docs/schedules.md")


def wfops_on_path(tmp_path: Path) -> dict[str, str]:
    """The environment of a scheduler whose PATH has a `wfops` (this checkout's)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "wfops"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m wfops \"$@\"\n")
    shim.chmod(0o755)
    return process_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})


def every_minute_project(tmp_path: Path) -> Project:
    return project(tmp_path / "p", '  - cron: "* * * * *"\n')  # due at every tick


@pytest.mark.slow
def test_the_crontab_line_ticks_the_project(tmp_path: Path) -> None:
    found = every_minute_project(tmp_path)
    [line] = [text for text in recipe("# crontab -e  (the user that owns the checkout)").splitlines()
              if text and not text.startswith("#")]
    fields = line.split(None, 5)
    assert next(CronSim(" ".join(fields[:5]), datetime(2026, 1, 1))) == datetime(2026, 1, 1, 0, 1)  # every minute
    command = fields[5].replace(PLACE, str(found.root))
    done = subprocess.run(["sh", "-c", command], env=wfops_on_path(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "started d slot" in (found.root / ".wfops" / "tick.log").read_text()
    assert len(found.runs(scheduled=True)) == 1


@pytest.mark.slow
def test_the_systemd_units_verify_and_the_service_ticks_the_project(tmp_path: Path) -> None:
    found = every_minute_project(tmp_path)
    service = recipe("# /etc/systemd/system/wfops-tick.service").replace(PLACE, str(found.root))
    timer = recipe("# /etc/systemd/system/wfops-tick.timer")
    units = tmp_path / "units"
    units.mkdir()
    (units / "wfops-tick.service").write_text(service)
    (units / "wfops-tick.timer").write_text(timer)
    analyze = shutil.which("systemd-analyze")
    if analyze is not None or os.environ.get("CI"):
        assert analyze, "systemd-analyze (Debian's systemd) checks the units in CI"
        checked = subprocess.run([analyze, "verify", str(units / "wfops-tick.timer"), str(units / "wfops-tick.service")],
                                 capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    # What systemd runs: ExecStart in WorkingDirectory.
    [start] = re.findall(r"^ExecStart=(.*)$", service, flags=re.MULTILINE)
    done = subprocess.run(start.split(), cwd=found.root, env=wfops_on_path(tmp_path), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and "started d slot" in done.stdout, done.stderr


@pytest.mark.slow
def test_the_cronjob_passes_the_kubernetes_schema(tmp_path: Path) -> None:
    manifest = tmp_path / "wfops-tick.cronjob.yaml"
    manifest.write_text(recipe("# wfops-tick.cronjob.yaml"))
    checker = shutil.which("kubernetes-validate")
    assert checker, "kubernetes-validate is a test dependency (pip install -e '.[test]')"
    done = subprocess.run([checker, "--strict", str(manifest)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "passed" in done.stdout, done.stdout + done.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text(manifest.read_text().replace("restartPolicy: Never", "restartPolicy: Never\n          retries: 3"))
    refused = subprocess.run([checker, "--strict", str(broken)], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0  # the checker can fail


@pytest.mark.slow
def test_the_generated_github_workflow_passes_githubs_schema_and_goes_stale(tmp_path: Path) -> None:
    found = project(tmp_path, '  - name: nightly\n    cron: "30 2 * * *"\n    timezone: Europe/Berlin\n')
    (tmp_path / ".git").mkdir()
    done = run_cli("ci", "schedule", "--json", cwd=tmp_path)
    assert done.code == 0 and done.json()["path"] == ".github/workflows/wfops.schedule.yml"
    workflow = tmp_path / ".github/workflows/wfops.schedule.yml"
    text = workflow.read_text()
    assert "#   d: 30 2 * * * (Europe/Berlin)" in text and 'cron: "*/5 * * * *"' in text
    assert "run: wfops schedule tick --json" in text
    checker = shutil.which("check-jsonschema")
    assert checker, "check-jsonschema is a test dependency (pip install -e '.[test]')"
    proc = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", str(workflow)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert found.check().ok
    # A changed schedule: the lock and the workflow are both stale until compile and ci schedule.
    deployment = tmp_path / "deployments/d.yaml"
    deployment.write_text(deployment.read_text().replace("30 2", "45 2"))
    codes = {d.code for d in Project(tmp_path).check().diagnostics}
    assert codes == {"stale-lock", "stale-schedule-workflow"}
    assert run_cli("compile", cwd=tmp_path).code == 0
    stale = run_cli("check", cwd=tmp_path)
    assert stale.code == 1
    assert ".github/workflows/wfops.schedule.yml:1:1: error[stale-schedule-workflow]" in stale.stdout
    assert run_cli("ci", "schedule", cwd=tmp_path).code == 0
    assert run_cli("check", cwd=tmp_path).code == 0
    assert "#   d: 45 2 * * * (Europe/Berlin)" in workflow.read_text()
