"""The GitHub step summary: sections, the taken path, appending, and through `wfops run`."""

from __future__ import annotations

import re
from pathlib import Path

from tests.everyday.test_graph import example
from tests.harness import run_cli
from wfops.engine.types import Interrupt, RunSnapshot, TraceEntry
from wfops.report.summary import append_step_summary, step_summary, taken_path

ARTIFACT = "sha256:" + "ab" * 32


def entry(seq: int, step: str, nxt: str | None, second: int = 0, outcome: str | None = "ok") -> TraceEntry:
    return TraceEntry(seq, step, "uses", 1, {}, outcome, {}, [], nxt, None,
                      f"2026-11-30T10:00:{second:02d}+00:00", f"2026-11-30T10:00:{second:02d}.250000+00:00")


def test_completed_run_has_every_section(tmp_path: Path) -> None:
    snapshot = RunSnapshot("run-1", "meeting-report", ARTIFACT, "meeting-report.local", "completed",
                           outcome="ok", output={"markdown": "# Sync\n```code```"})
    trace = [entry(1, "read", "extract", 0), entry(2, "extract", "render", 1), entry(3, "render", "end", 2)]
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n")
    append_step_summary(step_summary(snapshot, trace, example("meeting-report")), target)
    text = target.read_text()
    assert text.startswith("earlier step\n### ✅ wfops run `meeting-report.local`: completed\n")
    for row in ("| Run | `run-1` |", "| Status | completed |", "| Outcome | `ok` |", "| Steps | 3 |",
                "| Duration | 2.250 s |", "| Workflow | `meeting-report` (`sha256:abababababab`) |"):
        assert row in text
    assert "#### Output\n\n````json\n{\n  \"markdown\": \"# Sync\\n```code```\"\n}\n````" in text
    assert "#### Graph\n\n```mermaid\nflowchart TD\n" in text
    assert "    class s0,s1,s2,done taken" in text
    append_step_summary(step_summary(snapshot, trace, example("meeting-report")), target)
    assert target.read_text().count("### ✅ wfops run") == 2


def test_failed_and_interrupted_runs() -> None:
    failed = RunSnapshot("run-2", "meeting-report", ARTIFACT, None, "failed",
                         error={"type": "ValueError", "message": "notes path points outside", "step": "read"})
    text = step_summary(failed, [entry(1, "read", None, outcome=None)], example("meeting-report"))
    assert "### ❌ wfops run `meeting-report`: failed" in text
    assert "**Error** in step `read`:\n\n```text\nValueError: notes path points outside\n```" in text
    assert "| Outcome |" not in text and "#### Output\n\n```json\nnull\n```" in text
    waiting = RunSnapshot("run-3", "approval", ARTIFACT, "approval.local", "interrupted",
                          interrupt=Interrupt("i1", "ask", "approval", {"change": "deploy"}, ["approved", "rejected"]))
    text = step_summary(waiting, [entry(1, "ask", None, outcome=None)], example("approval"))
    assert "**Waiting** at step `ask` (approval)" in text and '"change": "deploy"' in text
    assert "wfops resume run-3 --outcome OUTCOME" in text and "one of `approved`, `rejected`" in text


def headings_outside_code(markdown: str) -> list[str]:
    """The ATX headings a CommonMark renderer sees: lines in fenced code blocks are text."""
    seen: list[str] = []
    fence = ""
    for line in markdown.splitlines():
        run = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if fence:
            if run and run.group(1)[0] == fence[0] and len(run.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
        elif run:
            fence = run.group(1)
        elif line.startswith("#"):
            seen.append(line)
    return seen


def test_error_text_cannot_break_out_of_its_block() -> None:
    message = "boom\n```\n# injected heading\n````\n| a | b |\n~~~"
    failed = RunSnapshot("run-4", "meeting-report", ARTIFACT, None, "failed",
                         error={"type": "RuntimeError", "message": message, "step": "read"},
                         output={"note": "`````"})
    text = step_summary(failed, [entry(1, "read", None, outcome=None)], example("meeting-report"))
    assert headings_outside_code(text) == ["### ❌ wfops run `meeting-report`: failed", "#### Output",
                                           "#### Graph"]
    assert "`````text\nRuntimeError: boom\n```\n# injected heading\n````\n| a | b |\n~~~\n`````" in text
    assert '``````json\n{\n  "note": "`````"\n}\n``````' in text
    plain = step_summary(RunSnapshot("run-5", "meeting-report", ARTIFACT, None, "failed", error="```\n# x"),
                         [], example("meeting-report"))
    assert headings_outside_code(plain)[1:] == ["#### Output", "#### Graph"]


def test_taken_path_folds_nested_frames_and_retries() -> None:
    entries = [e.to_dict() for e in (
        entry(1, "greet", None), entry(2, "greet[0]/check", "style"), entry(3, "greet[1]/check", "style"),
        entry(4, "greet", "any_failed"), entry(5, "any_failed", "summarize"), entry(6, "summarize", "end"),
        entry(7, "summarize", "end"))]
    assert taken_path(entries, "completed") == ["greet", "any_failed", "summarize", "end"]
    assert taken_path(entries, "failed") == ["greet", "any_failed", "summarize"]


def test_wfops_run_appends_a_summary_under_github_actions(examples_project: Path, tmp_path: Path) -> None:
    project = examples_project
    summary = tmp_path / "step-summary.md"
    proc = run_cli("run", "meeting-report.local", "--db", str(tmp_path / "db.sqlite"), cwd=project,
                   env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert "### ✅ wfops run `meeting-report.local`: completed" in text
    assert "| Outcome | `ok` |" in text and "#### Output" in text and "```mermaid" in text
    assert "class s0,s1,s2,done taken" in text
