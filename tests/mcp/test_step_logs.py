"""Step logs of MCP tools: the log notifications (and progress messages) a real stdio server
sends during a tool call are kept with the step, masked and bounded like a python node's; a
line sent while several calls are in flight is kept where it is true (the foreach that owns
them), saying which calls it may come from, never in one of them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests import mcpfork
from tests.conftest import write
from tests.harness import run_cli
from tests.mcp.projects import drive_tools
from wfops.sources.steplogs import MAX_LOG_CHARS

SERVER = Path(__file__).with_name("servers") / "stateful.py"
TOKEN = "s3cr3t-log-t0ken"

WORKFLOW = """
name: chat
input:
  type: object
  properties:
    names: {type: array, items: {type: string}}
    lines: {type: integer}
steps:
  - id: solo
    uses: srv.chatty
    with: {name: solo, lines: $input.lines, secret_env: LOG_TOKEN}
    next: each
  - id: each
    foreach: $input.names
    mode: parallel
    uses: srv.chatty
    with: {name: $item, lines: 2, pause: 0.3}
    next: end
"""


def _project(root: Path, *, names: str, lines: int = 2, level: str = "info") -> Path:
    write(root, {
        "sources.yaml": f"""
            sources:
              srv:
                kind: mcp
                command: [{sys.executable}, {SERVER}]
                env: {{LOG_TOKEN: "${{LOG_TOKEN:-unset}}"}}
                log_level: {level}
            """,
        "workflows/chat.yaml": WORKFLOW,
        "deployments/chat.yaml": f"""
            name: chat.local
            workflow: chat
            bindings: {{srv: srv}}
            secrets: [LOG_TOKEN]
            input: {{names: [{names}], lines: {lines}}}
            """,
    })
    compiled = run_cli("compile", cwd=root, env={"LOG_TOKEN": TOKEN})
    assert compiled.code == 0, compiled.stdout + compiled.stderr
    return root


def _run(root: Path) -> list[dict[str, Any]]:
    done = run_cli("run", "chat.local", cwd=root, env={"LOG_TOKEN": TOKEN})
    assert done.code == 0, done.stdout + done.stderr
    logs: list[dict[str, Any]] = run_cli("runs", "logs", "last", "--json", cwd=root).json()
    return logs


@pytest.mark.slow
def test_one_call_keeps_its_log_notifications_masked_and_concurrent_ones_go_to_their_foreach(
        tmp_path: Path) -> None:
    root = _project(tmp_path / "p", names='"a", "b"')
    logs = _run(root)
    by_step = {log["step"]: log for log in logs}
    # One call in flight: every line is its own, the progress message too; the secret is masked
    # and the debug line is below the source's `log_level: info`.
    assert by_step["solo"]["text"] == (
        "PROGRESS srv: 0/2 starting solo\nINFO srv: solo: line 0\nINFO srv: solo: line 1\n"
        "WARNING srv: solo: the token is ***\n")
    assert TOKEN not in str(logs)
    # Two items in flight at once: a log line says nothing of which call sent it, so it is in
    # the foreach's log, naming both; a progress message names its request: the item's own.
    assert by_step["each[0]"]["text"] == "PROGRESS srv: 0/2 starting a\n"
    assert by_step["each[1]"]["text"] == "PROGRESS srv: 0/2 starting b\n"
    foreach = by_step["each"]["text"].splitlines()
    assert len(foreach) == 4 and all(line.startswith("[srv: from one of each[") for line in foreach)
    assert sorted(line.split("] ", 1)[1] for line in foreach) == [
        "INFO srv: a: line 0", "INFO srv: a: line 1", "INFO srv: b: line 0", "INFO srv: b: line 1"]
    assert [log["seq"] for log in logs] == sorted(log["seq"] for log in logs)

    shown = run_cli("runs", "logs", "last", "solo", cwd=root)
    assert shown.stdout.startswith("== #1 solo ==\nPROGRESS srv: 0/2 starting solo\nINFO srv: solo: line 0\n")

    async def script(call: Any) -> None:
        trace = await call("read_trace", run_id="last")
        logged = {entry["step"]: entry["logs"] for entry in trace["entries"]}
        assert logged["solo"] == by_step["solo"]["text"]
        assert logged["each"] == by_step["each"]["text"]

    drive_tools(root, script)


@pytest.mark.slow
def test_a_flood_is_bounded_and_off_asks_for_none(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", names='"a"', lines=4000)
    [solo, item] = [log for log in _run(root) if log["step"] in ("solo", "each[0]")]
    text = solo["text"]
    assert len(text) < MAX_LOG_CHARS + 100 and "characters cut ...]" in text
    assert text.startswith("PROGRESS srv: 0/4000 starting solo\nINFO srv: solo: line 0\n")
    assert text.endswith("INFO srv: solo: line 3999\nWARNING srv: solo: the token is ***\n")
    # one item alone in flight: its lines are its own
    assert item["text"] == "PROGRESS srv: 0/2 starting a\nINFO srv: a: line 0\nINFO srv: a: line 1\n"

    quiet = _project(tmp_path / "q", names='"a"', level="off")
    assert {log["step"]: log["text"] for log in _run(quiet)} == {
        "solo": "PROGRESS srv: 0/2 starting solo\n", "each[0]": "PROGRESS srv: 0/2 starting a\n"}


def _source(level: str = "info") -> Any:
    from wfops.model.sources import McpSource
    from wfops.sources.mcp import McpClientSource

    return McpClientSource("srv", McpSource(kind="mcp", command=["x"], log_level=level), Path("."))


def _calling(source: Any, *where: tuple[str, str, int]) -> None:
    from wfops.sources.mcp import _Request

    source._calling = [_Request("tool", {}, None, where=place) for place in where]  # type: ignore[arg-type]


def _log(source: Any, level: str, text: str) -> None:
    import asyncio

    from mcp_types import LoggingMessageNotificationParams

    asyncio.run(source._on_log(LoggingMessageNotificationParams(level=level, data=text)))  # type: ignore[arg-type]


def test_a_line_goes_where_its_sender_is_known_and_nowhere_false() -> None:
    from wfops.sources.steplogs import take, take_run

    source = _source()
    _log(source, "info", "before any call")  # no run known yet: kept for the first run that calls
    source._calls_for("r1")
    _calling(source, ("r1", "a", 2))
    _log(source, "info", "mine")
    _log(source, "debug", "below the level")
    _calling(source, ("r1", "par/x/call", 1), ("r1", "par/y/call", 1))
    _log(source, "error", "theirs")
    _calling(source, ("r1", "a", 1), ("r1", "b", 1))
    _log(source, "warning", "no common step")
    _calling(source, ("r1", "a", 1), ("r2", "z", 1))
    _log(source, "info", "two runs")
    _calling(source)
    _log(source, "info", "between calls")
    assert take("r1", "a", 2) == "INFO srv: mine\n"
    assert take("r1", "par", 1) == "[srv: from one of par/x/call, par/y/call] ERROR srv: theirs\n"
    assert take_run("r1") == (
        "[srv: no call in flight] INFO srv: before any call\n"
        "[srv: from one of a, b] WARNING srv: no common step\n"
        "[srv: from one of a or 1 calls of other runs] INFO srv: two runs\n"
        "[srv: no call in flight] INFO srv: between calls\n")
    assert take_run("r2") == "[srv: from one of z or 1 calls of other runs] INFO srv: two runs\n"


def test_lines_of_a_step_that_stored_no_entry_come_with_the_run_log_when_it_ends() -> None:
    from wfops.sources.steplogs import take_run

    source = _source()
    _calling(source, ("r3", "each[0]", 1), ("r3", "each[1]", 1))
    _log(source, "info", "lost?")
    assert take_run("r3") is None  # the foreach may still store its entry
    assert take_run("r3", ended=True) == (
        "[for each, which stored no entry] [srv: from one of each[0], each[1]] INFO srv: lost?\n")


def test_the_run_log_is_stored_before_the_entry_it_came_with_and_shown_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.store.test_contract import entry, snap, start
    from wfops.cli.runs_cmd import _logs
    from wfops.runner.progress import ProgressSink
    from wfops.sources.steplogs import RUN_LOG, note
    from wfops.store import open_store

    store = open_store(tmp_path / "wfops.db")
    start(store, "r4")
    sink = ProgressSink(store)
    note("r4", "one", 1, "its own\n")
    note("r4", RUN_LOG, 0, "the run's\n")
    sink.commit(snap("r4"), [entry(1, step="one")])
    note("r4", RUN_LOG, 0, "later\n")
    after = snap("r4")
    after.cursor["seq"] = 1  # as the engine says: the last seq committed
    sink.commit(after, [])  # the seq of the run log with #1 is taken: it waits ...
    assert [log.seq for log in store.step_logs("r4")] == [-1, 1]
    ended = snap("r4", status="completed")
    ended.cursor["seq"] = 1
    sink.commit(ended, [])  # ... until the run ends
    logs = store.step_logs("r4")
    assert [(log.seq, log.step, log.text) for log in logs] == [
        (-1, "", "the run's\n"), (1, "one", "its own\n"), (-2, "", "later\n")]
    _logs(logs[:2], False, None)
    assert capsys.readouterr().out == "== run, up to #1 ==\nthe run's\n== #1 one ==\nits own\n"


def test_read_trace_gives_each_entry_its_log_and_the_run_log_stored_with_it(tmp_path: Path) -> None:
    from tests.mcp.projects import std_project
    from wfops.api import Project
    from wfops.store.protocol import StepLog

    root = std_project(tmp_path / "p")
    assert run_cli("compile", cwd=root).code == 0
    assert run_cli("run", "hello.local", cwd=root).code == 0
    project = Project(root)
    run_id = project.runs()[0].run_id
    with project._store(run_id) as store:
        store.add_step_logs(run_id, [StepLog(0, "", 0, "first\n"), StepLog(2, "shout", 1, "its own\n"),
                                     StepLog(-2, "", 0, "before shout\n")])

    async def script(call: Any) -> None:
        trace = await call("read_trace", run_id=run_id)
        assert [(e["step"], e["logs"], e["run_log"]) for e in trace["entries"]] == [
            ("greet", None, "first\n"), ("shout", "its own\n", "before shout\n")]
        second = await call("read_trace", run_id=run_id, from_seq=2)
        assert [e["run_log"] for e in second["entries"]] == ["before shout\n"]

    drive_tools(root, script)


@pytest.mark.slow  # starts its own MCP server process
def test_over_streamable_http_the_same_rule_holds(tmp_path: Path) -> None:
    import asyncio
    import socket
    import subprocess
    import time

    from tests.mcp.helpers import STATEFUL, Loop, ctx
    from tests.mcp.test_source_start import _free_port
    from wfops.model.sources import McpSource
    from wfops.sources.mcp import McpClientSource
    from wfops.sources.steplogs import take

    port = _free_port()
    # Started as an MCP client starts a server, under the session's basetemp: forked from the zygote.
    server = subprocess.Popen([sys.executable, STATEFUL, "--http", str(port)], cwd=tmp_path,
                              env=mcpfork.server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    loop = Loop()
    try:
        deadline = time.monotonic() + 60  # a hang guard
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        source = McpClientSource("remote", McpSource(kind="mcp", url=f"http://127.0.0.1:{port}/mcp"), tmp_path)
        loop.run(source.open())
        loop.run(source.call("chatty", {"name": "one"}, ctx("one")))
        assert take("run-1", "one", 1) == (
            "PROGRESS remote: 0/2 starting one\nINFO remote: one: line 0\nINFO remote: one: line 1\n")

        async def both() -> None:
            await asyncio.gather(*(source.call("chatty", {"name": n, "pause": 0.3}, ctx(f"each[{i}]"))
                                   for i, n in enumerate("ab")))

        loop.run(both())
        assert take("run-1", "each[0]", 1) == "PROGRESS remote: 0/2 starting a\n"
        lines = (take("run-1", "each", 1) or "").splitlines()
        assert len(lines) == 4 and all(line.startswith("[remote: from one of each[") for line in lines)
        loop.run(source.close())
    finally:
        loop.close()
        server.terminate()
        server.wait(10)
