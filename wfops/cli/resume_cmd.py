"""`wfops resume RUN_ID`: continue an interrupted or crashed run. Exit codes as `run`."""

from __future__ import annotations

import json

from wfops.errors import UsageError


def run(*, run_id: str, outcome: str | None, payload: str | None, json_out: bool,
        project: str | None, db: str | None) -> int:
    from wfops.cli.run_cmd import drive
    from wfops.runner import ResumeOptions, resume_run

    value = None
    if payload is not None:
        try:
            value = json.loads(payload)
        except ValueError as exc:
            raise UsageError(f"--payload is not valid JSON: {exc}") from None
        except RecursionError:
            raise UsageError("--payload is nested too deeply") from None
    return drive(lambda on_step: resume_run(ResumeOptions(
        run_id, outcome=outcome, payload=value, project=project, db=db, on_step=on_step)),
        json_out=json_out)
