"""`wfops run DEPLOYMENT` and `wfops resume RUN_ID`: drive a run, print its result.

Exit 0 completed, 1 failed, 2 refused, 3 interrupted, 6 cancelled (Ctrl-C stops a run
cleanly: it is recorded `cancelled` and can be resumed). Progress goes to stderr (in
`--json` mode only when a person watches stderr); the result goes to stdout; under
GitHub Actions the run is appended to the job summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from wfops import exits
from wfops.api import Project
from wfops.api.runs import empty_run_object
from wfops.cli.inputs import parse_payload, run_input
from wfops.cli.output import print_json, say, warn
from wfops.cli.progress import ProgressPrinter
from wfops.errors import RefusedError, WfopsError
from wfops.report import render

if TYPE_CHECKING:
    from wfops.api import Project, Run


def run(*, deployment: str, inputs: list[str], input_file: str | None, json_out: bool,
        project: str | None, db: str | None, executor: str | None = None, unlocked: bool = False,
        no_cache: bool = False) -> int:

    with _json_on_error(json_out, deployment=deployment):
        given = run_input(inputs, input_file)
        with Project(project, db=db) as found:
            return drive(found, lambda on_step: found.run(deployment, given, on_step=on_step, executor=executor,
                                                          unlocked=unlocked, no_cache=no_cache), json_out=json_out)


def resume(*, run_id: str, outcome: str | None, payload: str | None, json_out: bool,
           project: str | None, db: str | None, executor: str | None = None, no_cache: bool = False) -> int:

    with _json_on_error(json_out, run_id=run_id):
        value = parse_payload(payload)
        with Project(project, db=db) as found:
            return drive(found, lambda on_step: found.resume(run_id, outcome, value, on_step=on_step,
                                                             executor=executor, no_cache=no_cache),
                         json_out=json_out)


@contextlib.contextmanager
def _json_on_error(json_out: bool, *, run_id: str | None = None, deployment: str | None = None) -> Iterator[None]:
    """With `--json`, stdout holds one JSON object whatever happens: a run that is refused or
    cannot be driven prints the run object with `status` `refused` (exit 2) or `error` (any
    other exit), the error and the diagnostics, before the error reaches the CLI boundary
    (which still prints its line on stderr and picks the exit code)."""
    try:
        yield
    except WfopsError as exc:
        if json_out:
            print_json(refusal(exc, run_id=run_id, deployment=deployment))
        raise


def refusal(exc: WfopsError, *, run_id: str | None, deployment: str | None) -> dict[str, Any]:
    diagnostics = exc.diagnostics if isinstance(exc, RefusedError) else []
    return empty_run_object(run_id=run_id or exc.run_id, deployment=deployment,
                            status="refused" if exits.for_error(exc) == 2 else "error",
                            error={"type": type(exc).__name__, "message": exc.message, "hint": exc.hint},
                            diagnostics=[d.to_dict() for d in diagnostics])


def fork(*, run_id: str, from_step: str, inputs: list[str], input_file: str | None, json_out: bool,
         project: str | None, db: str | None) -> int:

    given = run_input(inputs, input_file)
    with Project(project, db=db) as found:
        return drive(found, lambda on_step: found.fork(run_id, from_step, given, on_step=on_step), json_out=json_out)


def cancel(*, run_id: str, json_out: bool, project: str | None, db: str | None) -> int:

    result = Project(project, db=db).cancel(run_id)
    if json_out:
        print_json(result.to_dict())
    elif result.status == "cancelled":
        say(f"run {result.run_id} cancelled")
        say(f"resume with: wfops resume {result.run_id}")
    else:
        say(f"run {result.run_id} is {result.status}: another process drives it; asked it to stop at its "
            "next step boundary")
    return 0


def drive(project: Project, start: Callable[[Any], Run], *, json_out: bool) -> int:
    """Run `start(on_step)` with progress on stderr, print the result, return the exit code."""

    printer = ProgressPrinter() if (not json_out or sys.stderr.isatty()) else None
    try:
        result = start(printer)
    except RefusedError as exc:
        if exc.diagnostics:
            render(list(exc.diagnostics), "text", sys.stderr)
        raise
    finally:
        if printer is not None:
            printer.done()
    if result.warnings:
        render(result.warnings, "text", sys.stderr)
    print_result(result, json_out=json_out)
    _github_summary(project, result)
    return exits.for_run(result.status)


def print_result(result: Run, *, json_out: bool) -> None:
    if json_out:
        print_json(result.to_dict())
        return
    head = f"run {result.run_id} {result.status}"
    if result.unlocked:
        say(f"run {result.run_id} ran the working tree (--unlocked), not what wfops.lock records")
    if result.status == "completed":
        say(f"{head} (outcome {result.outcome})")
        if result.output is not None:
            say(json.dumps(result.output, indent=2, ensure_ascii=False, default=str))
    elif result.status == "failed":
        error = result.error or {}
        say(f"{head} at step {error.get('step')}: {error.get('type')}: {error.get('message')}")
        say(f"once its cause is fixed, redrive the failed step (same input) with: wfops resume {result.run_id}")
    elif result.status == "interrupted" and result.interrupt is not None:
        interrupt = result.interrupt
        say(f"{head} at step {interrupt.step} ({interrupt.kind})")
        say("request: " + json.dumps(interrupt.request, ensure_ascii=False, default=str))
        say(resume_line(result))
        if interrupt.outcomes:
            say("  where OUTCOME is one of: " + ", ".join(interrupt.outcomes))
    elif result.status == "cancelled":
        say(head)
        say(f"resume with: wfops resume {result.run_id}")
    else:
        say(head)


def resume_line(result: Run) -> str:
    # Copy-pasteable: `a|b` would be a shell pipe, and a concrete outcome could approve by accident.
    return f"resume with: wfops resume {result.run_id} --outcome OUTCOME --payload '<json>'"


def _github_summary(project: Project, result: Run) -> None:
    """Under GitHub Actions, add the run to the job summary; a failure here only warns."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        # deferred: record-hit path; only a GitHub Actions step writes a summary
        from wfops.report.summary import append_step_summary

        append_step_summary(project.step_summary(result.run_id), path)
    except Exception as exc:  # noqa: BLE001 - the run already finished; the summary is best effort
        warn(f"wfops: warning: could not write the GitHub step summary: {exc}")
