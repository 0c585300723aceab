"""`wfops run DEPLOYMENT`: execute a deployment. Exit 0 completed, 1 failed, 2 refused, 3 interrupted."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

from wfops.errors import RefusedError


def run(*, deployment: str, inputs: list[str], input_file: str | None, json_out: bool,
        project: str | None, db: str | None) -> int:
    from wfops.runner import RunOptions, run_deployment
    from wfops.runner.inputs import merge, parse_assignments, read_input_file

    overrides = read_input_file(input_file) if input_file else {}
    overrides = merge(overrides, parse_assignments(inputs))
    return drive(lambda on_step: run_deployment(RunOptions(
        deployment, input=overrides, project=project, db=db, on_step=on_step)), json_out=json_out)


def drive(start: Callable[[Any], Awaitable[Any]], *, json_out: bool) -> int:
    """Run `start(on_step)` with progress on stderr, print the result, return the exit code."""
    from wfops.runner.progress import ProgressPrinter
    from wfops.runner.report import append_github_summary, print_result, print_warnings
    from wfops.runner.threads import run_coroutine

    # In --json mode stderr stays quiet unless a person is watching it.
    printer = ProgressPrinter() if (not json_out or sys.stderr.isatty()) else None
    try:
        result = run_coroutine(start(printer))
    except RefusedError as exc:
        show_refusal(exc)
        raise
    finally:
        if printer is not None:
            printer.done()
    print_warnings(result)
    print_result(result, json_out=json_out)
    append_github_summary(result)
    return result.exit_code


def show_refusal(exc: RefusedError) -> None:
    if exc.diagnostics:
        from wfops.report import render

        render(list(exc.diagnostics), "text", sys.stderr)
