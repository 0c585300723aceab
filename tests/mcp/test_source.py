"""McpClientSource against a real stateful server process (tests/mcp/servers/stateful.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.mcp.helpers import Loop, ctx, read_pid, stateful_source, wait_dead
from wfops.errors import CapabilityError, StepTimeout
from wfops.sources.base import Source
from wfops.sources.mcp import ANY_RESULT_SCHEMA
from wfops.sources.registry import BoundResolver


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory):
    """One server for the module: timeout 1 s so the hang test is quick."""
    root = tmp_path_factory.mktemp("proj")
    (root / "sub").mkdir()
    pid_file = root / "pid"
    loop = Loop()
    source = stateful_source(root, "--pid-file", str(pid_file), timeout=1,
                             env={"WFOPS_TEST_VALUE": "from-sources-yaml"}, cwd="sub")
    loop.run(source.open())
    yield loop, source, root, read_pid(pid_file)
    loop.run(source.close())
    loop.close()


def test_is_a_source_and_lists_every_tool_as_a_capability(shared) -> None:
    _, source, _, _ = shared
    assert isinstance(source, Source)
    caps = source.capabilities()
    assert {"counter", "echo", "echo_json", "fail", "hang", "die", "env", "cwd"} <= set(caps)
    counter = caps["counter"]
    assert counter.ref == "t.counter"
    assert counter.outcomes == ("ok",)
    assert counter.input_schema["properties"]["step"]["type"] == "integer"
    assert counter.output_schema["required"] == ["value", "pid"]
    assert "counter" in counter.description
    # A tool without an output schema gets {result: any}.
    assert caps["echo_json"].output_schema == ANY_RESULT_SCHEMA


def test_one_session_is_reused_by_every_call_of_a_run(shared) -> None:
    loop, source, _, pid = shared
    resolver = BoundResolver({"t": source}, {"clock": "t"})

    async def steps() -> list[dict]:
        return [(await resolver.call("clock.counter", {"step": 1}, ctx(f"s{i}"))).output
                for i in range(5)]

    outputs = loop.run(steps())
    values = [out["value"] for out in outputs]
    assert values == list(range(values[0], values[0] + 5))  # the server kept its state
    assert {out["pid"] for out in outputs} == {pid}           # and it is one process
    assert resolver.capability("clock.counter").source == "t"


def test_structured_output_is_the_step_output(shared) -> None:
    loop, source, _, _ = shared
    result = loop.run(source.call("echo", {"text": "42"}, ctx()))
    assert (result.outcome, result.output) == ("ok", {"result": "42"})


def test_text_only_results_become_result_and_json_objects_are_parsed(shared) -> None:
    loop, source, _, _ = shared
    parsed = loop.run(source.call("echo_json", {"text": '{"a": [1, 2]}'}, ctx()))
    assert parsed.output == {"result": {"a": [1, 2]}}
    scalar = loop.run(source.call("echo_json", {"text": "42"}, ctx()))
    assert scalar.output == {"result": "42"}  # a scalar text is never reinterpreted
    broken = loop.run(source.call("echo_json", {"text": "{not json"}, ctx()))
    assert broken.output == {"result": "{not json"}


def test_is_error_is_a_step_failure_with_the_tools_message(shared) -> None:
    loop, source, _, _ = shared
    with pytest.raises(CapabilityError, match=r"^mcp tool t\.fail failed: boom at step 3$"):
        loop.run(source.call("fail", {"message": "boom at step 3"}, ctx()))


def test_bad_arguments_are_a_step_failure(shared) -> None:
    loop, source, _, _ = shared
    with pytest.raises(CapabilityError, match=r"(?s)t\.counter failed: .*valid integer"):
        loop.run(source.call("counter", {"step": "x"}, ctx()))


def test_unknown_tool_is_refused_without_a_round_trip(shared) -> None:
    loop, source, _, _ = shared
    with pytest.raises(CapabilityError, match="has no tool 'nosuch'"):
        loop.run(source.call("nosuch", {}, ctx()))


def test_a_hanging_tool_times_out_and_the_session_survives(shared) -> None:
    loop, source, _, pid = shared
    with pytest.raises(StepTimeout, match=r"tool 'hang' did not answer within 1s"):
        loop.run(source.call("hang", {}, ctx()))
    after = loop.run(source.call("counter", {"step": 0}, ctx()))
    assert after.output["pid"] == pid


def test_a_caller_that_gives_up_cancels_only_its_own_call(shared) -> None:
    loop, source, _, pid = shared

    async def impatient() -> None:
        await asyncio.wait_for(source.call("hang", {"seconds": 30}, ctx()), 0.1)

    with pytest.raises(TimeoutError):
        loop.run(impatient())
    assert loop.run(source.call("counter", {"step": 0}, ctx())).output["pid"] == pid


def test_concurrent_calls_share_the_session(shared) -> None:
    loop, source, _, _ = shared

    async def fan() -> list[int]:
        results = await asyncio.gather(*(source.call("counter", {"step": 1}, ctx(f"f{i}"))
                                         for i in range(10)))
        return sorted(r.output["value"] for r in results)

    values = loop.run(fan())
    assert len(set(values)) == 10 and values[-1] - values[0] == 9


def test_env_is_merged_over_a_minimal_environment_and_cwd_is_project_relative(shared) -> None:
    loop, source, root, _ = shared
    env = lambda name: loop.run(source.call("env", {"name": name}, ctx())).output["result"]  # noqa: E731
    assert env("WFOPS_TEST_VALUE") == "from-sources-yaml"
    assert env("PATH")  # inherited
    assert env("PYTEST_CURRENT_TEST") == ""  # the rest of our environment is not
    cwd = loop.run(source.call("cwd", {}, ctx())).output["result"]
    assert Path(cwd).resolve() == (root / "sub").resolve()


@pytest.mark.slow  # starts its own MCP server process(es)
def test_close_ends_the_server_process_and_is_idempotent(tmp_path: Path) -> None:
    loop = Loop()
    pid_file = tmp_path / "pid"
    source = stateful_source(tmp_path, "--pid-file", str(pid_file), timeout=30)
    try:
        loop.run(source.open())
        pid = read_pid(pid_file)

        async def close_mid_call() -> None:
            call = asyncio.ensure_future(source.call("hang", {"seconds": 60}, ctx()))
            await asyncio.sleep(0.2)  # the call is in flight on the server
            await source.close()
            with pytest.raises(CapabilityError, match="closed|cancelled"):
                await call
            await source.close()

        loop.run(close_mid_call())
        assert wait_dead(pid), "the server process outlived close()"
        with pytest.raises(CapabilityError, match="not open"):
            loop.run(source.call("counter", {}, ctx()))
    finally:
        loop.close()


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_server_that_dies_mid_run_is_a_clear_error_and_the_next_call_restarts_it(tmp_path: Path) -> None:
    loop = Loop()
    pid_file = tmp_path / "pid"
    source = stateful_source(tmp_path, "--pid-file", str(pid_file), source_id="flaky")
    try:
        loop.run(source.open())
        pid = read_pid(pid_file)
        assert loop.run(source.call("counter", {}, ctx())).output["value"] == 1
        with pytest.raises(CapabilityError, match=r"mcp source 'flaky': the server closed the connection "
                                                  r"\(it exited or crashed\) during tool 'die'"):
            loop.run(source.call("die", {}, ctx()))
        assert wait_dead(pid)
        # The next call (a retry, the next step) starts the server again: a new process, fresh state.
        again = loop.run(asyncio.wait_for(source.call("counter", {}, ctx()), 30)).output
        assert again["value"] == 1 and again["pid"] != pid == int(pid) and read_pid(pid_file) == again["pid"]
        loop.run(source.close())
        assert wait_dead(again["pid"])
    finally:
        loop.close()


def test_each_call_carries_the_step_context_for_idempotency(shared) -> None:
    loop, source, _, _ = shared
    result = loop.run(source.call("context", {}, ctx("charge", attempt=2)))
    assert result.output["result"] == {"run_id": "run-1", "workflow": "wf", "deployment": None, "step": "charge",
                                       "attempt": 2, "idempotency_key": "run-1/charge"}


@pytest.mark.slow  # starts its own MCP server process(es)
def test_opening_twice_at_once_shares_one_session(tmp_path: Path) -> None:
    loop = Loop()
    pid_file = tmp_path / "pid"
    source = stateful_source(tmp_path, "--pid-file", str(pid_file))
    try:
        async def both() -> None:
            await asyncio.gather(source.open(), source.open())
            assert "counter" in source.capabilities()
            await source.open()  # already open: nothing happens

        loop.run(both())
        pid = read_pid(pid_file)
        assert loop.run(source.call("counter", {}, ctx())).output == {"value": 1, "pid": pid}
        loop.run(source.close())
        assert wait_dead(pid)
    finally:
        loop.close()


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_forgotten_close_still_stops_the_server_when_the_loop_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    source = stateful_source(tmp_path, "--pid-file", str(pid_file))

    async def careless() -> None:
        await source.open()
        await source.call("counter", {}, ctx())

    asyncio.run(careless())  # asyncio.run cancels the owner task; its shutdown is shielded
    assert wait_dead(read_pid(pid_file))
