"""`next_steps`: short advice on the tool call that usually comes next.

Written for an agent driving wfops: name the tool and its arguments. Advice sits
next to the diagnostics and never replaces them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from wfops.diagnostics import Diagnostic


def after_findings(diagnostics: Iterable[Diagnostic], *, clean: list[str]) -> list[str]:
    """Advice after validate/check/compile findings: fix what is wrong, or go on."""
    found = list(diagnostics)
    errors = [d for d in found if d.is_error]
    if not errors:
        return clean
    steps: list[str] = []
    codes = {d.code for d in errors}
    if codes & {"stale-lock", "contract-unknown", "capability-drift", "capability-missing"}:
        steps.append("compile (the lock is out of date: compile snapshots the contracts and rewrites "
                     "wfops.lock; review and commit it)")
    others = [d for d in errors if d.code not in {"stale-lock", "contract-unknown"}]
    if len(others) == 1:
        only = others[0]
        steps.insert(0, f"fix the error in {only.file} ({only.hint or only.message}), then validate again")
    elif others:
        files = sorted({d.file for d in others})
        steps.insert(0, f"fix the {len(others)} errors in {', '.join(files)} (each diagnostic has a hint), "
                        "then validate again")
    return steps


def after_validate(diagnostics: Iterable[Diagnostic], deployments: list[str]) -> list[str]:
    return after_findings(diagnostics, clean=[
        "compile (snapshot capability contracts and write wfops.lock)",
        *(f"then run_deployment with deployment={name!r}" for name in deployments[:3])])


def after_compile(deployments: list[str]) -> list[str]:
    steps = ["commit wfops.lock with the workflow changes"]
    steps += [f"run_deployment with deployment={name!r}" for name in deployments[:5]]
    return steps


def after_check(diagnostics: Iterable[Diagnostic], deployments: list[str]) -> list[str]:
    return after_findings(diagnostics, clean=[f"run_deployment with deployment={name!r}"
                                              for name in deployments[:5]] or ["nothing to do: the lock is current"])


def after_run(run: Any) -> list[str]:
    """Advice from a RunOut."""
    if run.status == "interrupted" and run.interrupt is not None:
        outcomes = ", ".join(repr(o) for o in run.interrupt.outcomes) or "<outcome>"
        payload = " and a payload matching " + json.dumps(run.interrupt.resume_schema, sort_keys=True) \
            if run.interrupt.resume_schema else ""
        return [f"resume_run with run_id={run.run_id!r} and outcome one of [{outcomes}]{payload}",
                f"show_run with run_id={run.run_id!r} to see the request again"]
    if run.status == "failed":
        step = (run.error or {}).get("step")
        where = f" (it failed at step {step!r})" if step else ""
        return [f"read_trace with run_id={run.run_id!r} to see each step's input and error{where}",
                "fix the cause, then run_deployment again (a failed run is final and cannot be resumed)"]
    if run.status == "running":
        return [f"show_run with run_id={run.run_id!r} later; if its process died, "
                f"resume_run with run_id={run.run_id!r}"]
    return [f"read_trace with run_id={run.run_id!r} to see every step"]


def after_error(exc: Any) -> list[str]:
    """A known error's advice, in tool calls (its hint is written for the CLI)."""
    if type(exc).__name__ == "UnknownRunError":
        return ["list_runs to see the stored runs and their run_id"]
    return [exc.hint] if exc.hint else []


def after_refusal(diagnostics: Iterable[Diagnostic], hint: str | None, tool: str) -> list[str]:
    """A run or resume that may not start: the findings say why, else the error's hint does."""
    return after_findings(diagnostics, clean=[hint or f"fix what the error says, then call {tool} again"])
