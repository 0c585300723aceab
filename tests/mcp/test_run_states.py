"""One table of run states drives every run result: each state (running and driven, orphaned,
interrupted, failed, cancelled, completed) is reached for real, its status fields are read, and
every call its advice suggests is made exactly as given and must succeed. Forks keep lineage."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env, wait_for
from tests.mcp.projects import drive_tools, std_project
from wfops.api import Project

SLEEPY = "name: sleepy\nsteps:\n  - {id: nap, uses: std.sleep, with: {seconds: 1}, next: end}\n"
DOOMED = """
name: doomed
steps:
  - {id: before, uses: std.echo, with: {value: 1}, next: boom}
  - {id: boom, uses: std.fail, with: {message: "no luck"}, next: end}
"""
STATE_FIELDS = {  # state -> (done, exit_code, ok), as `wfops run`/`resume` would exit
    "running": (False, None, True), "orphaned": (True, 1, True), "interrupted": (True, 3, True),
    "failed": (True, 1, False), "cancelled": (True, 6, True), "completed": (True, 0, True),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = std_project(tmp_path)
    write(root, {"workflows/sleepy.yaml": SLEEPY, "deployments/sleepy.yaml": "name: sleepy.local\nworkflow: sleepy\n",
                 "workflows/doomed.yaml": DOOMED, "deployments/doomed.yaml": "name: doomed.local\nworkflow: doomed\n"})
    assert Project(root).compile().ok
    return root


def orphan(root: Path) -> str:
    """A run whose process was killed mid-step: `running` in the store, driven by nobody."""
    proc = subprocess.Popen([*WFOPS, "run", "sleepy.local", "--input", "x=1", "--project", str(root)],
                            cwd=root, env=process_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run = wait_for(lambda: Project(root).runs(deployment="sleepy.local"), what="the run to be stored")[0]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    return run.run_id


def drive(root: Path, script: Any) -> None:
    drive_tools(root, script)


async def walk(call: Any, result: dict[str, Any], state: str) -> list[dict[str, Any]]:
    """Check `result`'s status fields against the table, then make every suggested call as given."""
    run = result["run"]
    assert run["state"] == state, run
    assert run["orphaned"] is (state == "orphaned")
    assert (result["done"], result["exit_code"], result["ok"]) == STATE_FIELDS[state], result
    assert result["next_actions"], f"{state}: no advice"
    answers = []
    for action in result["next_actions"]:
        answer = await call(action["tool"], **action["arguments"])
        assert answer["error"] is None, (state, action, answer["error"])
        answers.append(answer)
    return answers


@pytest.mark.slow  # a real `wfops run` process is killed to orphan its run
def test_each_state_says_what_it_is_and_each_suggestion_works_as_given(root: Path) -> None:
    orphaned = orphan(root)

    async def script(call: Any) -> None:
        started = await call("start_run", deployment="sleepy.local")
        await walk(call, started, "running")  # wait_run (it completes meanwhile), read_trace

        shown = await call("show_run", run_id=orphaned)
        [resumed, _trace] = await walk(call, shown, "orphaned")
        assert resumed["run"]["state"] == "completed"

        asked = await call("run_deployment", deployment="ask.local")
        resume = asked["next_actions"][0]
        assert resume["tool"] == "resume_run" and resume["arguments"]["payload"] == {"by": "<by>"}
        [answered, _shown] = await walk(call, asked, "interrupted")
        assert answered["run"]["state"] == "completed"
        await walk(call, answered, "completed")

        failed = await call("run_deployment", deployment="doomed.local")
        assert failed["run"]["error"]["step"] == "boom"
        [_trace, redriven] = await walk(call, failed, "failed")
        assert redriven["run"]["state"] == "failed"  # redriven, and it fails again

        again = await call("run_deployment", deployment="ask.local")
        cancelled = await call("cancel_run", run_id=again["run"]["run_id"])
        [continued, _trace] = await walk(call, cancelled, "cancelled")
        assert continued["run"]["state"] == "interrupted"

    drive(root, script)


def test_a_completed_run_is_forked_from_a_step_with_a_new_input(root: Path) -> None:
    async def script(call: Any) -> None:
        first = await call("run_deployment", deployment="hello.local", input={"who": "world"})
        rid = first["run"]["run_id"]
        assert first["run"]["forked_from"] is None and first["run"]["output"] == {"greeting": "hello world"}

        # resume of a completed run is refused, and its advice is a fork that works as given
        refused = await call("resume_run", run_id=rid)
        assert refused["ok"] is False and refused["error"]["type"] == "RefusedError"
        fork = refused["next_actions"][0]
        assert fork["tool"] == "fork_run" and fork["arguments"]["run_id"] == rid
        assert (await call(fork["tool"], **fork["arguments"]))["run"]["state"] == "completed"

        # from its second step, with a new input: the first step is not run again
        forked = await call("fork_run", run_id=rid, from_step="shout", input={"who": "mars"})
        run = forked["run"]
        assert (run["state"], forked["done"], forked["exit_code"]) == ("completed", True, 0)
        assert run["forked_from"]["run_id"] == rid and run["forked_from"]["step"] == "shout"
        assert run["output"] == {"greeting": "hello world"}  # greet was not re-run with "mars"
        original = (await call("read_trace", run_id=rid))["entries"]
        trace = (await call("read_trace", run_id=run["run_id"]))["entries"]
        assert [e["step"] for e in trace] == ["greet", "shout"]
        assert trace[0]["started_at"] == original[0]["started_at"]  # the original's entry, kept
        assert trace[1]["started_at"] > original[1]["started_at"]
        listed = await call("list_runs", deployment="hello.local")
        assert {r["run_id"]: r["forked_from"] for r in listed["runs"]}[run["run_id"]]["run_id"] == rid
        shown = await call("show_run", run_id=run["run_id"])
        assert shown["run"]["forked_from"]["step"] == "shout"

        # wait 0: the fork returns at once, and wait_run follows it
        quick = await call("fork_run", run_id=rid, from_step="greet", wait=0)
        waited = await call("wait_run", run_id=quick["run"]["run_id"])
        assert waited["done"] is True and waited["run"]["output"] == {"greeting": "hello world"}

    drive(root, script)
