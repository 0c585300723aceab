from __future__ import annotations

import asyncio
import threading
import types

import pytest
from pydantic import BaseModel

import wfops
from tests.harness import finishes
from wfops.errors import CapabilityError
from wfops.sources.base import CallResult
from wfops.sources.python import PythonSource

from .helpers import make_engine, run


class NapIn(BaseModel):
    seconds: float


class NapOut(BaseModel):
    slept: float


NAP_RELEASE = threading.Event()  # ends every nap early
NAPPED: list[float] = []  # the naps that have finished


@wfops.node
def nap(payload: NapIn) -> NapOut:
    NAP_RELEASE.wait(payload.seconds)
    NAPPED.append(payload.seconds)
    return NapOut(slept=payload.seconds)


def one_step(step: dict, **extra: object) -> dict:
    return {"name": "w", "state": {"out": {}, "err": {}},
            "output": {"out": "$state.out", "err": "$state.err"},
            "steps": [{"id": "s", **step}, {"id": "recover", "end": "recovered"}], **extra}


def flaky(failures: int):
    seen: list[int] = []

    def handler(payload: dict, ctx) -> dict:
        seen.append(ctx.attempt)
        if len(seen) <= failures:
            raise CapabilityError(f"boom {len(seen)}")
        return {"v": payload["x"]}

    return handler, seen


def test_retry_with_exponential_backoff_then_success_same_input_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    engine, source, sink = make_engine([one_step(
        {"uses": "t.flaky", "with": {"x": "$input.x"}, "save": {"v": "state.out"}, "next": "end",
         "retry": {"attempts": 3, "backoff": 0.05}})])
    handler, seen = flaky(2)
    source.add("flaky", handler)
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float, *args, **kwargs):
        waits.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    snap = run(engine.start("w", {"x": 7}))
    assert snap.status == "completed" and snap.output["out"] == 7
    assert seen == [1, 2, 3]
    assert [w for w in waits if w] == [0.05, 0.05 * 2]  # the backoff really waited, doubling
    calls = source.called("flaky")
    assert {c.idempotency_key for _, c in calls} == {calls[0][1].idempotency_key}
    assert all(p == {"x": 7} for p, _ in calls)
    # Every failed attempt stays in the trace with its error, before the one that succeeded.
    first, second, entry = sink.trace
    assert [(e.kind, e.attempt, e.error["message"]) for e in (first, second)] == [
        ("retry", 1, "boom 1"), ("retry", 2, "boom 2")]
    assert entry.attempt == 3 and entry.error is None


def test_retries_exhausted_without_catch_fails_the_run() -> None:
    engine, source, sink = make_engine([one_step(
        {"uses": "t.flaky", "with": {"x": 1}, "next": "end", "retry": {"attempts": 2, "backoff": 0}})])
    source.add("flaky", flaky(5)[0])
    snap = run(engine.start("w", {}))
    assert snap.status == "failed"
    assert snap.error == {"type": "CapabilityError", "message": "boom 2", "step": "s"}
    assert sink.trace[-1].error == snap.error and sink.trace[-1].attempt == 2 and sink.trace[-1].next is None


def test_outcomes_are_never_retried() -> None:
    engine, source, _ = make_engine([one_step(
        {"uses": "t.maybe", "on": {"ok": "end", "empty": "recover"}, "retry": {"attempts": 3, "backoff": 0}})])
    source.add("maybe", lambda p, c: CallResult("empty"), outcomes=("ok", "empty"))
    snap = run(engine.start("w", {}))
    assert snap.outcome == "recovered" and len(source.calls) == 1


def test_catch_routes_and_saves_the_error() -> None:
    engine, source, sink = make_engine([one_step(
        {"uses": "std.fail", "with": {"message": "nope"}, "next": "end",
         "catch": {"next": "recover", "save": "state.err"}})])
    snap = run(engine.start("w", {}))
    assert snap.outcome == "recovered"
    assert snap.output["err"] == {"type": "CapabilityError", "message": "nope", "step": "s"}
    entry = sink.trace[0]
    assert entry.next == "recover" and entry.error["message"] == "nope"


def test_timeout_of_an_async_capability_cancels_it() -> None:
    cancelled: list[bool] = []

    async def hang(payload: dict, ctx) -> dict:
        try:
            await asyncio.Event().wait()  # never set: only the timeout's cancellation ends this
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {}

    engine, source, _ = make_engine([one_step({"uses": "t.hang", "next": "end", "timeout": 0.1,
                                               "catch": {"next": "recover", "save": "state.err"}})])
    source.add("hang", hang)
    snap = finishes(lambda: run(engine.start("w", {})))
    assert cancelled == [True]
    assert snap.outcome == "recovered" and snap.output["err"]["type"] == "Timeout"


def test_timeout_of_a_sync_capability_abandons_its_thread() -> None:
    release, finished = threading.Event(), threading.Event()

    def hang(payload: dict, ctx) -> dict:
        release.wait(60)  # blocked until the test lets go (60 s: only a hang guard)
        finished.set()
        return {}

    engine, source, _ = make_engine([one_step({"uses": "t.hang", "next": "end", "timeout": 0.1})])
    source.add("hang", hang)

    async def go():
        snap = await engine.start("w", {})
        still_blocked = not finished.is_set()
        release.set()
        return snap, still_blocked

    snap, still_blocked = finishes(lambda: run(go()))
    assert still_blocked  # the step gave up at its timeout, not when the thread finished
    assert snap.status == "failed" and snap.error["type"] == "Timeout" and "0.1s" in snap.error["message"]


def test_unrouted_outcome_fails_the_run_even_with_catch() -> None:
    engine, source, _ = make_engine([one_step(
        {"uses": "t.maybe", "next": "end", "catch": {"next": "recover"}})])
    source.add("maybe", lambda p, c: CallResult("empty"), outcomes=("ok", "empty"))
    snap = run(engine.start("w", {}))
    assert snap.status == "failed" and snap.error["type"] == "UnroutedOutcome"
    assert "'empty'" in snap.error["message"]


def test_undeclared_outcome_is_a_step_failure() -> None:
    engine, source, _ = make_engine([one_step({"uses": "t.odd", "on": {"ok": "end", "weird": "recover"}})])
    source.add("odd", lambda p, c: CallResult("weird"))
    snap = run(engine.start("w", {}))
    assert snap.status == "failed" and snap.error["type"] == "UndeclaredOutcome"


def test_output_not_matching_the_capability_schema_fails_the_step() -> None:
    engine, source, _ = make_engine([one_step({"uses": "t.typed", "save": {"n": "state.out"}, "next": "end"})])
    source.add("typed", lambda p, c: {"n": "three"},
               output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    snap = run(engine.start("w", {}))
    assert snap.status == "failed" and snap.error["type"] == "InvalidOutput" and "$.n" in snap.error["message"]


def test_unknown_capability_is_a_step_failure_not_a_crash() -> None:
    engine, _, _ = make_engine([one_step({"uses": "t.missing", "next": "end"})])
    snap = run(engine.start("w", {}))
    assert snap.status == "failed" and snap.error["type"] == "UnknownCapability"


def test_real_python_source_sync_node_times_out_and_async_node_runs() -> None:
    module = types.ModuleType("naps")
    module.nap = nap
    source = PythonSource("t", module)
    wf = one_step({"uses": "t.nap", "with": {"seconds": "$input.s"}, "save": {"slept": "state.out"},
                   "next": "end", "timeout": 0.2})
    engine, _, _ = make_engine([wf], source=source)  # type: ignore[arg-type]

    async def go(seconds: float):
        snap = await engine.start("w", {"s": seconds})
        napped = list(NAPPED)
        NAP_RELEASE.set()  # let a nap still running end (its thread is joined after go)
        return snap, napped

    NAP_RELEASE.clear()
    NAPPED.clear()
    snap, napped = run(go(0.01))
    assert snap.output["out"] == 0.01 and napped == [0.01]
    NAP_RELEASE.clear()
    snap, napped = finishes(lambda: run(go(3600)))  # an hour, unless released
    assert snap.error["type"] == "Timeout" and napped == [0.01]  # timed out with the node still asleep
