"""A handful of end-to-end smoke tests through the installed `wfops` console script, as a
user's shell runs it. Everything else drives the CLI in process (tests/harness.py); these
keep the real entry point, exit status and pipes honest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import process_env

pytestmark = pytest.mark.slow


def console_script() -> str | None:
    """The `wfops` script installed next to this interpreter (else the one on PATH)."""
    beside = Path(sys.executable).parent / "wfops"
    return str(beside) if beside.is_file() else shutil.which("wfops")


SCRIPT = console_script()
needs_script = pytest.mark.skipif(SCRIPT is None, reason="needs the wfops console script (pip install -e .)")


def wfops(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    # process_env puts this checkout first on the path, whatever the script was installed from.
    return subprocess.run([SCRIPT, *args], cwd=cwd, env=process_env(), capture_output=True, text=True,
                          timeout=120)


@needs_script
def test_version_and_help() -> None:
    version = wfops("--version", cwd=Path.cwd())
    assert (version.returncode, version.stderr) == (0, "")
    assert version.stdout.startswith("wfops ")
    usage = wfops("--help", cwd=Path.cwd())
    assert usage.returncode == 0 and "Usage: wfops" in usage.stdout and "run" in usage.stdout


@needs_script
def test_init_validate_compile_run_show(tmp_path: Path) -> None:
    assert wfops("init", "proj", cwd=tmp_path).returncode == 0
    project = tmp_path / "proj"
    for verb in ("validate", "compile", "check"):
        done = wfops(verb, cwd=project)
        assert done.returncode == 0, (verb, done.stdout, done.stderr)
    ran = wfops("run", "hello.local", "--input", "name=smoke", "--json", cwd=project)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["status"] == "completed" and result["output"]["greeting"] == "Hello, smoke!"
    shown = wfops("runs", "show", result["run_id"], "--json", cwd=project)
    assert shown.returncode == 0
    stored = json.loads(shown.stdout)
    assert {k: stored[k] for k in result} == result and stored["input"] == {"name": "smoke"}


@needs_script
def test_exit_codes_for_findings_interrupts_and_no_project(tmp_path: Path) -> None:
    root = write(tmp_path / "p", {
        "sources.yaml": "sources: {}\n",
        "workflows/ask.yaml": "name: ask\nsteps:\n  - {id: q, interrupt: approval, on: {approved: end}}\n",
        "deployments/ask.yaml": "name: ask.local\nworkflow: ask\n",
    })
    assert wfops("compile", cwd=root).returncode == 0
    asked = wfops("run", "ask.local", "--json", cwd=root)
    assert asked.returncode == 3 and json.loads(asked.stdout)["status"] == "interrupted"
    (root / "workflows/broken.yaml").write_text("name: broken\nsteps:\n  - {id: a, uses: std.echo, next: nowhere}\n")
    found = wfops("validate", "--format", "json", cwd=root)
    assert found.returncode == 1 and "Traceback" not in found.stderr
    assert "unknown-target" in {d["code"] for d in json.loads(found.stdout)["diagnostics"]}
    nowhere = wfops("validate", cwd=tmp_path)
    assert nowhere.returncode == 2 and nowhere.stderr.startswith("wfops: error: no wfops project")
