"""MCP tools as workflow steps, through the real runner (gate, engine, store): one session
per source for the whole run, tool errors and timeouts as step failures, no leftover server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, write
from tests.mcp.helpers import STATEFUL, read_pid, wait_dead
from wfops.api import Project

COUNT = """
name: count
state:
  values: {type: array, reducer: append}
  pids: {type: array, reducer: union}
output: {values: $state.values, pids: $state.pids}
steps:
  - {id: one, uses: t.counter, with: {step: 1}, save: {value: state.values, pid: state.pids}, next: two}
  - {id: two, uses: t.counter, with: {step: 1}, save: {value: state.values, pid: state.pids}, next: three}
  - {id: three, uses: t.counter, with: {step: 1}, save: {value: state.values, pid: state.pids}, next: text}
  - {id: text, uses: t.echo_json, with: {text: '{"done": true}'}, save: {result: state.values}, next: end}
"""

FLAKY = """
name: flaky
steps:
  - {id: before, uses: t.counter, next: boom}
  - {id: boom, uses: t.fail, with: {message: "quota exceeded for key 7"}, next: end}
"""

PATIENCE = """
name: patience
state:
  problem: {type: object}
  impatient: {type: object}
  after: {type: object}
output: {problem: $state.problem, impatient: $state.impatient, after: $state.after}
steps:
  - id: wait
    uses: t.hang
    with: {seconds: 30}
    catch: {next: quick, save: state.problem}
    next: end
  - id: quick
    uses: t.hang
    with: {seconds: 30}
    timeout: 0.3
    catch: {next: again, save: state.impatient}
    next: end
  - {id: again, uses: t.counter, save: state.after, next: end}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    write(root, {
        "sources.yaml": f"""
            sources:
              t:
                kind: mcp
                command: [python, {STATEFUL}, --pid-file, pid]
                timeout: 1
            """,
        "workflows/count.yaml": COUNT, "workflows/flaky.yaml": FLAKY, "workflows/patience.yaml": PATIENCE,
        "deployments/count.yaml": "name: count.local\nworkflow: count\n",
        "deployments/flaky.yaml": "name: flaky.local\nworkflow: flaky\n",
        "deployments/patience.yaml": "name: patience.local\nworkflow: patience\n",
    })
    compiled = Project(root).compile()  # starts the server once to snapshot its contracts
    assert compiled.ok, compiled.diagnostics
    assert (root / "wfops.lock").is_file()
    return root


def _run(root: Path, deployment: str):
    return Project(root).run(deployment)


def test_one_session_serves_every_step_of_a_run(project: Path) -> None:
    result = _run(project, "count.local")
    snap = result
    assert snap.status == "completed", snap.error
    assert snap.output["values"] == [1, 2, 3, {"done": True}]  # the counter kept counting: one process
    assert snap.output["pids"] == [read_pid(project / "pid")]
    assert wait_dead(read_pid(project / "pid")), "the server outlived the run"


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_tool_error_fails_the_step_with_the_tools_message(project: Path) -> None:
    result = _run(project, "flaky.local")
    snap = result
    assert snap.status == "failed"
    assert snap.error["step"] == "boom"
    assert "quota exceeded for key 7" in snap.error["message"]
    trace = Project(project).trace(snap.run_id)
    assert [e.step for e in trace] == ["before", "boom"]
    assert wait_dead(read_pid(project / "pid"))


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_hanging_tool_times_out_and_the_run_goes_on_with_the_same_session(project: Path) -> None:
    result = _run(project, "patience.local")
    snap = result
    assert snap.status == "completed", snap.error
    assert "did not answer within 1s" in snap.output["problem"]["message"]  # the source's timeout
    assert snap.output["impatient"]["step"] == "quick"  # the step's own, shorter timeout
    assert snap.output["after"]["pid"] == read_pid(project / "pid")
    assert wait_dead(read_pid(project / "pid"))


@pytest.mark.slow  # starts its own MCP server process(es)
def test_the_world_clock_example_runs_on_the_real_time_server(tmp_path: Path) -> None:
    """The shipped example (sources.yaml `clock`, workflows/world-clock.yaml) on mcp-server-time."""
    from wfops.loader.yaml import load_yaml_file

    clock = load_yaml_file(REPO / "sources.yaml", "sources.yaml").data["sources"]["clock"]
    command = ", ".join(clock["command"])
    write(tmp_path, {"sources.yaml": f"sources:\n  clock:\n    kind: mcp\n    command: [{command}]\n"})
    for rel in ("workflows/world-clock.yaml", "deployments/world-clock.local.yaml"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    assert Project(tmp_path).compile().ok
    snap = _run(tmp_path, "world-clock.local")
    assert snap.status == "completed", snap.error
    assert snap.output["now"]["timezone"] == "Asia/Kolkata"
    assert snap.output["meeting"]["time_difference"] == "+5.5h"
    assert snap.output["meeting"]["target"]["datetime"].endswith("T15:00:00+05:30")
    assert snap.output["summary"].startswith("Asia/Kolkata: now ")


RENDEZVOUS = REPO / "tests" / "mcp" / "servers" / "rendezvous.py"
BOTH = """
name: both
state:
  a: {type: object}
  b: {type: object}
output: {a: $state.a, b: $state.b}
steps:
  - {id: first, uses: a.counter, save: state.a, next: second}
  - {id: second, uses: b.counter, save: state.b, next: end}
"""


@pytest.mark.slow  # starts its own MCP server processes
def test_the_servers_a_run_needs_start_together(tmp_path: Path) -> None:
    # Each server starts serving only once the other has started: opened one after the
    # other, the first would wait for its partner until its start timeout refused the run.
    marks = tmp_path / "marks"
    marks.mkdir()
    root = write(tmp_path / "proj", {
        "sources.yaml": f"""
            sources:
              a: {{kind: mcp, command: [python, {RENDEZVOUS}, a, b, {marks}]}}
              b: {{kind: mcp, command: [python, {RENDEZVOUS}, b, a, {marks}]}}
            """,
        "workflows/both.yaml": BOTH,
        "deployments/both.yaml": "name: both.local\nworkflow: both\n",
    })
    from wfops.runner.gate_record import recorded

    assert Project(root).compile().ok  # `compile` lists them together too
    for rerun in (False, True):  # the full gate, then the gate record
        assert (recorded(root, "both.local") is not None) == rerun
        for mark in marks.iterdir():
            mark.unlink()
        snap = _run(root, "both.local")
        assert snap.status == "completed", (rerun, snap.error)
        assert snap.output["a"]["pid"] != snap.output["b"]["pid"]
