"""What `run` and `resume` print when they finish, and the GitHub step summary."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from wfops.runner.execute import RunResult


def print_result(result: RunResult, *, json_out: bool) -> None:
    from wfops.cli.output import print_json, say

    snapshot = result.snapshot
    if json_out:
        print_json(snapshot.to_public())
        return
    head = f"run {snapshot.run_id} {snapshot.status}"
    if snapshot.status == "completed":
        say(f"{head} (outcome {snapshot.outcome})")
        if snapshot.output is not None:
            say(json.dumps(snapshot.output, indent=2, ensure_ascii=False, default=str))
    elif snapshot.status == "failed":
        error = snapshot.error or {}
        say(f"{head} at step {error.get('step')}: {error.get('type')}: {error.get('message')}")
    elif snapshot.status == "interrupted" and snapshot.interrupt is not None:
        interrupt = snapshot.interrupt
        say(f"{head} at step {interrupt.step} ({interrupt.kind})")
        say("request: " + json.dumps(interrupt.request, ensure_ascii=False, default=str))
        # Copy-pasteable: `a|b` would be a shell pipe, and a concrete outcome could approve by accident.
        say(f"resume with: wfops resume {snapshot.run_id} --outcome OUTCOME --payload '<json>'")
        if interrupt.outcomes:
            say("  where OUTCOME is one of: " + ", ".join(interrupt.outcomes))
    else:
        say(head)


def print_warnings(result: RunResult) -> None:
    if result.warnings:
        from wfops.report import render

        render(result.warnings, "text", sys.stderr)


def append_github_summary(result: RunResult) -> None:
    """Under GitHub Actions, add the run to the job summary; a failure here only warns."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    from wfops.cli.output import warn

    try:
        from wfops.report.summary import append_step_summary
    except ImportError:
        return
    try:
        from wfops.runner.execute import read_trace

        trace: Any = read_trace(result.db, result.snapshot.run_id)
        append_step_summary(result.snapshot, trace, result.root_workflow, path)
    except Exception as exc:  # noqa: BLE001 - the run already finished; the summary is best effort
        warn(f"wfops: warning: could not write the GitHub step summary: {exc}")
