"""The README's tour as a user sees it: its commands run on a copy of the worked examples
and print what the README shows (run ids and durations aside)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.harness import run_cli

REPO = Path(__file__).resolve().parents[2]
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8}")
MS = re.compile(r"\(\d+(?:\.\d+)? ms\)")


def _tour() -> str:
    readme = REPO.joinpath("README.md").read_text()
    return readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]


def _block(step: str) -> list[str]:
    """The lines of the first console block of tour step `step` (`**3. ...`)."""
    part = _tour().split(f"**{step}.", 1)[1]
    return part.split("```console\n", 1)[1].split("```", 1)[0].splitlines()


def _plain(text: str) -> str:
    return MS.sub("(N ms)", RUN_ID.sub("RUN_ID", text))


@pytest.fixture
def tour(examples_project: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "tour"
    shutil.copytree(examples_project, copy, ignore=shutil.ignore_patterns(".wfops"))
    (copy / "tests").mkdir()
    for test_file in REPO.glob("tests/*.wftest.yaml"):  # the repository's workflow tests, as a clone has them
        shutil.copy2(test_file, copy / "tests" / test_file.name)
    return copy


def test_step_1_runs_as_shown(tour: Path) -> None:
    shown = _block("1")
    assert shown[0] == "$ wfops run meeting-report.local"
    done = run_cli("run", "meeting-report.local", cwd=tour)
    assert done.code == 0
    progress = [line for line in shown[1:] if line.startswith("  #")]
    assert [_plain(line) for line in done.stderr.splitlines()] == [_plain(line) for line in progress]
    assert _plain(done.stdout.splitlines()[0]) == _plain(next(line for line in shown if line.startswith("run ")))
    empty = run_cli("run", "meeting-report.local", "--input", "path=examples/report/empty.md", "--json", cwd=tour)
    assert empty.json()["outcome"] == "empty"
    outside = run_cli("run", "meeting-report.local", "--input", "path=../../etc/passwd", cwd=tour)
    assert outside.code == 1 and "points outside the project" in outside.stdout


def test_step_3_validate_prints_what_the_readme_shows(tour: Path) -> None:
    shown = _block("3")
    assert shown[0] == "$ wfops validate"
    workflow = tour / "workflows" / "meeting-report.yaml"
    workflow.write_text(workflow.read_text().replace("uses: notes.extract_report", "uses: notes.extract"))
    done = run_cli("validate", cwd=tour)
    assert done.code == 1
    assert done.stdout.splitlines() == shown[1:]
    # The dev loop of step 1: the edit runs unlocked once it validates again.
    workflow.write_text(workflow.read_text().replace("uses: notes.extract\n", "uses: notes.extract_report\n"))
    workflow.write_text(workflow.read_text().replace("version: 1\n", "version: 2\n"))  # the lock is stale now
    assert run_cli("run", "meeting-report.local", cwd=tour).code == 2
    assert run_cli("run", "meeting-report.local", "--unlocked", cwd=tour).code == 0


def test_step_5_interrupts_and_resumes_as_shown(tour: Path) -> None:
    shown = _block("5")
    assert shown[0] == "$ wfops run approval.local"
    done = run_cli("run", "approval.local", cwd=tour)
    assert done.code == 3
    lines = done.stdout.splitlines()
    assert _plain(lines[0]) == _plain(shown[1])
    assert lines[1].startswith(shown[2].removesuffix("...}")), (lines[1], shown[2])
    assert [_plain(line) for line in lines[2:]] == [_plain(line) for line in shown[3:5]]
    command = shown[5].removeprefix("$ ").split(" ", 2)
    run_id = RUN_ID.search(lines[0])
    assert run_id is not None and command[:2] == ["wfops", "resume"]
    resumed = run_cli("resume", run_id.group(0), "--outcome", "approved", "--payload", '{"by": "ana"}', cwd=tour)
    assert resumed.code == 0 and "completed" in resumed.stdout
