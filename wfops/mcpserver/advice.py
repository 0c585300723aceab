"""`next_actions`: the tool calls that usually come next, each `{tool, arguments, reason}` and
callable as given, in MCP terms (never CLI flags). `next_steps` is the same advice as text.

Advice sits next to the diagnostics and never replaces them. It follows the state: after
drift it is `compile` (never "edit wfops.lock"); after a completed run there is nothing to
resume; a failed run is redriven by resume_run once its cause is fixed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from wfops.api.approvals import APPROVE_COMMAND
from wfops.diagnostics import Diagnostic
from wfops.mcpserver.models import NextAction

LOCK_CODES = {"stale-lock", "contract-unknown", "capability-drift", "capability-missing"}


def act(tool: str, reason: str, **arguments: Any) -> NextAction:
    return NextAction(tool=tool, arguments={k: v for k, v in arguments.items() if v is not None}, reason=reason)


def as_text(actions: Iterable[NextAction]) -> list[str]:
    """Plain text for humans: `tool(arg=value, ...): reason`."""
    out = []
    for action in actions:
        args = ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in action.arguments.items())
        out.append(f"{action.tool}({args}): {action.reason}" if args else f"{action.tool}: {action.reason}")
    return out


def after_findings(diagnostics: Iterable[Diagnostic], *, clean: list[NextAction]) -> list[NextAction]:
    """After validate/check/compile findings: fix what is wrong, or go on."""
    errors = [d for d in diagnostics if d.is_error]
    if not errors:
        return clean
    actions: list[NextAction] = []
    others = [d for d in errors if d.code not in LOCK_CODES]
    for file in sorted({d.file for d in others})[:3]:
        mine = [d for d in others if d.file == file]
        first = mine[0]
        what = first.hint or first.message
        more = f" (and {len(mine) - 1} more errors there)" if len(mine) > 1 else ""
        if file.startswith("<"):
            actions.append(act("validate", f"fix the text ({what}){more} and validate it again"))
        else:
            actions.append(act("read_file", f"fix {file} line {first.line}: {what}{more}; then write_file "
                                            "or patch_workflow it", path=file))
    if {d.code for d in errors} & LOCK_CODES:
        actions.append(act("compile", "the lock is out of date: compile snapshots the contracts and "
                                      "rewrites wfops.lock (commit it with the change)"))
    return actions


def runs_of(deployments: list[str], limit: int = 3) -> list[NextAction]:
    return [act("start_run", f"run {name}", deployment=name) for name in deployments[:limit]]


def after_validate(diagnostics: Iterable[Diagnostic], deployments: list[str]) -> list[NextAction]:
    return after_findings(diagnostics, clean=[
        act("compile", "snapshot capability contracts and write wfops.lock"), *runs_of(deployments)])


def after_compile(deployments: list[str]) -> list[NextAction]:
    return [*runs_of(deployments, 5)]


def after_check(diagnostics: Iterable[Diagnostic], deployments: list[str]) -> list[NextAction]:
    return after_findings(diagnostics, clean=runs_of(deployments, 5))


def after_write(diagnostics: Iterable[Diagnostic], written: bool, path: str,
                deployments: list[str]) -> list[NextAction]:
    found = list(diagnostics)
    if not written:
        return after_findings(found, clean=[act("read_file", "read the file as it is", path=path)])
    return after_findings(found, clean=[
        act("compile", "snapshot capability contracts and write wfops.lock"), *runs_of(deployments)])


def after_run(run: Any) -> list[NextAction]:
    """From a RunOut: answer an interrupt, follow a running run, read a finished one."""
    rid = run.run_id
    if run.status == "interrupted" and run.interrupt is not None:
        outcomes = list(run.interrupt.outcomes)
        schema = run.interrupt.resume_schema
        payload = f" with a payload matching {json.dumps(schema, sort_keys=True)}" if schema else ""
        return [act("resume_run", f"answer the interrupt: outcome one of {outcomes}{payload}",
                    run_id=rid, outcome=outcomes[0] if outcomes else None),
                act("show_run", "see the request again", run_id=rid)]
    if run.status == "failed":
        step = (run.error or {}).get("step")
        where = f" (it failed at step {step!r})" if step else ""
        return [act("read_trace", f"see each step's input and error{where}", run_id=rid),
                act("resume_run", "once the cause is fixed: redrive it from the failed step (its "
                                  "committed steps are not run again)", run_id=rid)]
    if run.status == "running":
        return [act("wait_run", "wait for it to finish or stop at an interrupt", run_id=rid, timeout=30),
                act("show_run", "its status now (orphaned: no process drives it; resume_run it)", run_id=rid)]
    if run.status == "cancelled":
        return [act("resume_run", "continue it from its last committed step", run_id=rid),
                act("read_trace", "see what it did", run_id=rid)]
    return [act("read_trace", "see every step (the run is complete: nothing to resume)", run_id=rid)]


def after_start(run: Any) -> list[NextAction]:
    """After start_run: the run may already have moved on (an interrupt reached before the
    answer went out), so wait_run comes first whatever the status (it returns at once when
    the run is done), then what the status itself advises."""
    follow = after_run(run)
    if any(a.tool == "wait_run" for a in follow):
        return follow
    return [act("wait_run", "follow it until it finishes or stops at an interrupt", run_id=run.run_id, timeout=30),
            *follow]


def after_orphan(run: Any) -> list[NextAction]:
    return [act("resume_run", "no process drives this run any more: continue it from its last "
                              "committed step", run_id=run.run_id)]


def awaiting_approval(sources: list[str]) -> str:
    """What a write that left client-written sources held tells the agent to tell its person."""
    names = ", ".join(f"`{s}`" for s in sources)
    commands = "; ".join(f"`{APPROVE_COMMAND} {s}`" for s in sources)
    return (f"source{'s' if len(sources) > 1 else ''} {names} must be approved by a person before any tool "
            f"starts or imports {'them' if len(sources) > 1 else 'it'}: tools that would are refused (or ask "
            f"through elicitation, where this client supports it) until a person runs {commands} in the "
            "project, or starts the server with `wfops mcp --allow-client-sources`")


def after_unapproved(exc: Any, tool: str) -> list[NextAction]:
    """A refusal for a held source: the person's step, then the same call again."""
    held = [d.source for d in exc.held]
    commands = "; ".join(f"`{APPROVE_COMMAND} {s}`" for s in held)
    return [act(tool, f"call it again once a person has run {commands} in the project (it shows each "
                      "declaration and records the yes); an agent cannot approve its own sources"),
            act("read_file", "show the person what they are asked to approve", path="sources.yaml")]


def after_error(exc: Any) -> list[NextAction]:
    """A known error's advice, in tool calls (its hint is written for people)."""
    name = type(exc).__name__
    if name == "UnknownRunError":
        return [act("list_runs", "see the stored runs and their run_id")]
    if name == "RunStopped":
        return [act("resume_run", "continue it from its last committed step", run_id=exc.run_id),
                act("read_trace", "see what it did so far", run_id=exc.run_id)]
    if name == "UsageError" and "outside the project" in str(getattr(exc, "message", "")):
        return [act("list_project", "see the project's files")]
    return []


def after_refusal(diagnostics: Iterable[Diagnostic], tool: str) -> list[NextAction]:
    """A run or resume that may not start: the findings say why."""
    return after_findings(diagnostics, clean=[act("validate", f"check the project, then call {tool} again")])
