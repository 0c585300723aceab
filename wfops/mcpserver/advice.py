"""`next_actions`: the tool calls that usually come next, each `{tool, arguments, reason}` and
callable as given, in MCP terms (never CLI flags). `next_steps` is the same advice as text.

Advice sits next to the diagnostics and never replaces them. It follows the state: after
drift it is `compile` (never "edit wfops.lock"); after a completed run there is nothing to
resume; a failed run is redriven by resume_run once its cause is fixed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wfops.api.approvals import APPROVE_COMMAND
from wfops.api.scaffold_test import fitting
from wfops.diagnostics import Diagnostic
from wfops.exits import for_run
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
    others = [d for d in errors if d.code not in LOCK_CODES and d.code != "secret-missing"]
    for file in sorted({d.file for d in others})[:3]:
        mine = [d for d in others if d.file == file]
        first = mine[0]
        what = first.hint or first.message
        more = f" (and {len(mine) - 1} more errors there)" if len(mine) > 1 else ""
        if file.startswith("<"):
            actions.append(act("validate", f"fix the text ({what}){more} and validate it again"))
        elif first.code in ("file-missing", "file-unreadable") or file.endswith("/"):
            actions.append(act("list_project", f"{file}: {what}{more}"))  # nothing there to read_file
        else:
            actions.append(act("read_file", f"fix {file} line {first.line}: {what}{more}; then write_file "
                                            "or patch_workflow it", path=file))
    if {d.code for d in errors} & LOCK_CODES:
        actions.append(act("compile", "the lock is out of date: compile snapshots the contracts and "
                                      "rewrites wfops.lock (commit it with the change)"))
    return actions


def runs_of(deployments: Mapping[str, list[str]], limit: int = 3) -> list[NextAction]:
    """A start_run per deployment; `deployments`: name -> the capabilities it calls that their
    source annotates destructive, named in its warning."""
    return [act("start_run", f"run {name} (for real: its steps' side effects happen; "
                             + (f"WARNING: it calls {', '.join(destructive)}, annotated destructive)" if destructive
                                else "describe_capability shows which capabilities are destructive)"),
                deployment=name)
            for name, destructive in list(deployments.items())[:limit]]


def after_clean(stale: bool, deployments: Mapping[str, list[str]]) -> list[NextAction]:
    """A clean project: compile only when the lock is out of date (check would fail), else run."""
    if stale:
        return [act("compile", "the lock is out of date: snapshot capability contracts and write wfops.lock")]
    return runs_of(deployments)


def after_validate(diagnostics: Iterable[Diagnostic], deployments: Mapping[str, list[str]], stale: bool) -> list[NextAction]:
    return after_findings(diagnostics, clean=after_clean(stale, deployments))


def after_compile(deployments: Mapping[str, list[str]]) -> list[NextAction]:
    return [*runs_of(deployments, 5)]


def after_check(diagnostics: Iterable[Diagnostic], deployments: Mapping[str, list[str]]) -> list[NextAction]:
    return after_findings(diagnostics, clean=runs_of(deployments, 5))


def after_write(diagnostics: Iterable[Diagnostic], written: bool, path: str,
                deployments: Mapping[str, list[str]], stale: bool) -> list[NextAction]:
    found = list(diagnostics)
    if not written:
        return after_findings(found, clean=[act("read_file", "read the file as it is", path=path)])
    if path.endswith((".wftest.yaml", ".wftest.yml")):
        return after_findings(found, clean=[act("run_tests", "run the test file", paths=[path])])
    return after_findings(found, clean=after_clean(stale, deployments))


#: How long the advised wait_run/resume_run/fork_run calls wait (seconds).
WAIT = 30


@dataclass(frozen=True)
class RunState:
    """One row of the run-state table: what a run in this state is, as every run result says it."""

    done: bool                # no process drives it on: waiting longer changes nothing
    exit_code: int | None     # what `wfops run`/`resume` exits with for it (None: it has not ended)
    ok: bool                  # false only for a failed run (the call itself went well)
    advise: Callable[[Any], list[NextAction]]


def _running(run: Any) -> list[NextAction]:
    return [act("wait_run", "wait for it to finish or stop at an interrupt", run_id=run.run_id, timeout=WAIT),
            act("read_trace", "the steps it has committed so far", run_id=run.run_id)]


def _orphaned(run: Any) -> list[NextAction]:
    return [act("resume_run", "no process drives this run any more: continue it from its last committed "
                              "step", run_id=run.run_id, wait=WAIT),
            act("read_trace", "see what it did before its process died", run_id=run.run_id)]


def _interrupted(run: Any) -> list[NextAction]:
    rid = run.run_id
    interrupt = run.interrupt
    if interrupt is None:
        return [act("show_run", "see the open interrupt", run_id=rid)]
    outcomes = list(interrupt.outcomes)
    payload = fitting(interrupt.resume_schema, "payload") if interrupt.resume_schema else None
    marked = " and replace each `<...>` placeholder in payload" if payload is not None else ""
    others = f" (or another outcome of {outcomes})" if len(outcomes) > 1 else ""
    return [act("resume_run", f"answer the interrupt at step {interrupt.step!r}: pick the outcome{others}"
                              f"{marked}", run_id=rid, outcome=outcomes[0] if outcomes else None,
                payload=payload, wait=WAIT),
            act("show_run", "see the request again", run_id=rid)]


def _failed(run: Any) -> list[NextAction]:
    step = (run.error or {}).get("step")
    where = f" (it failed at step {step!r})" if step else ""
    return [act("read_trace", f"see each step's input and error{where}", run_id=run.run_id),
            act("resume_run", "once the cause is fixed: redrive it from the failed step (its committed "
                              "steps are not run again)", run_id=run.run_id, wait=WAIT)]


def _cancelled(run: Any) -> list[NextAction]:
    return [act("resume_run", "continue it from its last committed step", run_id=run.run_id, wait=WAIT),
            act("read_trace", "see what it did", run_id=run.run_id)]


def _completed(run: Any) -> list[NextAction]:
    return [act("read_trace", "see every step (the run is complete: nothing to resume; fork_run one of "
                              "its steps to run again from there with a new input)", run_id=run.run_id)]


#: The one table of run states: every run result's `done`, `exit_code`, `ok` and advice.
STATES: dict[str, RunState] = {
    "running": RunState(False, None, True, _running),
    "orphaned": RunState(True, for_run("running"), True, _orphaned),
    "interrupted": RunState(True, for_run("interrupted"), True, _interrupted),
    "failed": RunState(True, for_run("failed"), False, _failed),
    "cancelled": RunState(True, for_run("cancelled"), True, _cancelled),
    "completed": RunState(True, for_run("completed"), True, _completed),
}


def after_run(run: Any) -> list[NextAction]:
    """From a RunOut: what its state advises."""
    return STATES[run.state].advise(run)


def after_start(run: Any) -> list[NextAction]:
    """After start_run: the run may already have moved on (an interrupt reached before the
    answer went out), so wait_run comes first whatever the state (it returns at once when
    the run is done), then what the state itself advises."""
    follow = after_run(run)
    if any(a.tool == "wait_run" for a in follow):
        return follow
    return [act("wait_run", "follow it until it finishes or stops at an interrupt", run_id=run.run_id,
                timeout=WAIT), *follow]


def after_refused_resume(run: Any, first_step: str | None) -> list[NextAction]:
    """A resume that was refused: what the run's state advises instead (a completed run is forked)."""
    if run.state == "completed" and first_step is not None:
        return [act("fork_run", "a completed run is not resumed: fork it from a step (the steps before it "
                                "are not run again; pass input to change it)", run_id=run.run_id,
                    from_step=first_step, input={}, wait=WAIT),
                *_completed(run)]
    return [a for a in after_run(run) if a.tool != "resume_run"] or _completed(run)


def secrets_note(secrets: dict[str, str]) -> str:
    """How a secret input is passed: by reference, never by value (run inputs are stored)."""
    listed = ", ".join(f"`{key}` (as $secret.{name})" for key, name in secrets.items())
    return (f"secret inputs: {listed}. Never pass a secret's value as a run input or in a file: a workflow "
            "binds it as $secret.NAME, the deployment lists NAME under `secrets:`, and the value is read "
            "from the environment of the wfops server (set it in the `env` of the client's wfops server "
            "entry); validate warns when it is missing there")


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
    """A run or resume that may not start: each finding's fix, the missing secrets' last (the
    server must be restarted with them, then the same call made again)."""
    found = list(diagnostics)
    actions = after_findings(found, clean=[])
    secrets = [d for d in found if d.code == "secret-missing" and d.deployment]
    if secrets:
        names = ", ".join(sorted({d.message.split(" needs the secret ")[-1].split(",")[0] for d in secrets}))
        actions.append(act(tool, f"call it again once the server runs with {names} set ({secrets[0].hint})",
                           deployment=secrets[0].deployment))
    return actions or [act("list_project", f"see the project as it is, then call {tool} again")]
