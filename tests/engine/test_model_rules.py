"""The workflow model's own rules in the engine: concurrent writes fail with nothing saved
(merging reducers merge), required mapped outputs are present, typed retry and catch, jitter
and the delay cap (read back from the trace, never timed), and conditional parallel branches."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wfops.errors import CapabilityError, StepTimeout
from wfops.sources.contract import ContractError

from .helpers import Crash, MemorySink, make_engine, run


def writer(tag: str, target: str) -> dict[str, Any]:
    return {"id": tag, "uses": "t.say", "with": {"tag": tag}, "save": {"tag": target}, "next": "end"}


def fork(state: dict[str, Any], branches: dict[str, list[dict[str, Any]]], **extra: Any) -> dict[str, Any]:
    return {"name": "w", "state": state, "output": {name: f"$state.{name}" for name in state},
            "steps": [{"id": "par", "parallel": branches, "next": "end", **extra}]}


def saying(source: Any) -> None:
    source.add("say", lambda payload, ctx: {"tag": payload["tag"]})


def test_two_branches_writing_one_replace_field_fail_the_step_and_save_nothing() -> None:
    engine, source, sink = make_engine([fork({"last": {"type": "string"}, "seen": {"reducer": "append"}},
                                             {"a": [writer("a1", "state.last")],
                                              "b": [writer("b1", "state.last")]})])
    saying(source)
    snap = run(engine.start("w", {}))
    assert snap.status == "failed"
    assert snap.error["type"] == "ConcurrentWrite" and snap.error["step"] == "par"
    assert "branches `a` and `b`" in snap.error["message"] and "state.last" in snap.error["message"]
    join = sink.trace[-1]
    assert (join.step, join.state_changes) == ("par", [])  # nothing of either branch is committed
    assert snap.output is None


def test_a_catch_does_not_hide_a_concurrent_write() -> None:
    engine, source, _ = make_engine([fork({"last": {"type": "string"}, "err": {}},
                                          {"a": [writer("a1", "state.last")], "b": [writer("b1", "state.last")]},
                                          catch={"next": "end", "save": "state.err"})])
    saying(source)
    assert run(engine.start("w", {})).error["type"] == "ConcurrentWrite"


def test_two_branches_writing_one_append_field_merge() -> None:
    engine, source, _ = make_engine([fork({"seen": {"type": "array", "reducer": "append"}},
                                          {"a": [writer("a1", "state.seen")], "b": [writer("b1", "state.seen")]})])
    saying(source)
    snap = run(engine.start("w", {}))
    assert snap.status == "completed" and snap.output == {"seen": ["a1", "b1"]}


def test_branches_writing_different_keys_of_one_object_join_and_the_same_key_fails() -> None:
    state = {"o": {"type": "object"}}
    ok, source, _ = make_engine([fork(state, {"a": [writer("a1", "state.o.a")], "b": [writer("b1", "state.o.b")]})])
    saying(source)
    assert run(ok.start("w", {})).output == {"o": {"a": "a1", "b": "b1"}}
    clash, source, _ = make_engine([fork(state, {"a": [writer("a1", "state.o.k")], "b": [writer("b1", "state.o.k")]})])
    saying(source)
    assert run(clash.start("w", {})).error["type"] == "ConcurrentWrite"


def fan(target: str, reducer: str) -> dict[str, Any]:
    return {"name": "w", "state": {"x": {"reducer": reducer}}, "output": {"x": "$state.x"},
            "steps": [{"id": "fan", "foreach": "$input.items", "uses": "t.say", "with": {"tag": "$item"},
                       "mode": "parallel", "save_each": {"tag": target}, "next": "end"}]}


def test_foreach_items_writing_one_replace_field_fail_before_any_item_runs() -> None:
    engine, source, sink = make_engine([fan("state.x", "replace")])
    saying(source)
    snap = run(engine.start("w", {"items": ["a", "b"]}))
    assert snap.error["type"] == "ConcurrentWrite" and "foreach step `fan`" in snap.error["message"]
    assert source.calls == [] and all(not e.state_changes for e in sink.trace)
    merged, source, _ = make_engine([fan("state.x", "append")])
    saying(source)
    assert run(merged.start("w", {"items": ["a", "b"]})).output == {"x": ["a", "b"]}


def mapped(output_schema: dict[str, Any], returned: dict[str, Any]) -> Any:
    engine, source, sink = make_engine([{
        "name": "w", "state": {"x": {"default": "before"}}, "output": {"x": "$state.x"},
        "steps": [{"id": "s", "uses": "t.give", "save": {"x": "state.x"}, "next": "end"}]}])
    source.add("give", lambda payload, ctx: returned, output_schema=output_schema)
    return run(engine.start("w", {})), sink


def test_a_missing_required_mapped_output_fails_the_step_naming_the_field() -> None:
    snap, sink = mapped({"type": "object", "required": ["x"]}, {"y": 1})
    assert snap.status == "failed"
    assert snap.error["type"] == "InvalidOutput" and '"x" is a required property' in snap.error["message"]
    assert sink.trace[-1].state_changes == []


def test_a_missing_optional_mapped_output_leaves_the_field_as_it_was() -> None:
    snap, _ = mapped({"type": "object", "properties": {"x": {"type": "string"}}}, {})
    assert snap.status == "completed" and snap.output == {"x": "before"}


def step_of(step: dict[str, Any], **state: Any) -> dict[str, Any]:
    return {"name": "w", "state": {"err": {}, "out": {}, **state}, "output": {"err": "$state.err", "out": "$state.out"},
            "steps": [{"id": "s", **step}, {"id": "fallback", "end": "fell_back"}, {"id": "report", "end": "reported"}]}


def failing(*errors: BaseException) -> Any:
    seen: list[int] = []

    async def handler(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        seen.append(ctx.attempt)
        if len(seen) <= len(errors):
            raise errors[len(seen) - 1]
        return {"v": len(seen)}

    return handler, seen


def retries(sink: MemorySink) -> list[Any]:
    return [e for e in sink.trace if e.kind == "retry"]


def test_retry_on_retries_a_timeout_and_fails_invalid_input_at_once() -> None:
    async def hang(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        await asyncio.Event().wait()
        return {}

    step = {"uses": "t.hang", "next": "end", "timeout": 0.02,
            "retry": {"attempts": 4, "backoff": 0, "on": ["Timeout"]}}
    engine, source, sink = make_engine([step_of(step)])
    source.add("hang", hang)
    snap = run(engine.start("w", {}))
    assert snap.error["type"] == "Timeout"
    assert [e.attempt for e in retries(sink)] == [1, 2, 3]  # retried three times, then the fourth failed
    assert len(source.calls) == 4

    handler, seen = failing(ContractError("InvalidInput", "x: field required"))
    engine, source, sink = make_engine([step_of({**step, "uses": "t.bad", "timeout": None,
                                                 "retry": {"attempts": 4, "backoff": 0}})])
    source.add("bad", handler)
    snap = run(engine.start("w", {}))
    assert snap.error["type"] == "InvalidInput" and seen == [1] and retries(sink) == []


def test_retry_on_fails_an_error_type_it_does_not_name_at_once_and_callfailed_names_a_nodes_own() -> None:
    handler, seen = failing(ValueError("no"), ValueError("no"))
    step = {"uses": "t.f", "save": {"v": "state.out"}, "next": "end", "retry": {"attempts": 3, "backoff": 0,
                                                                                  "on": ["Timeout"]}}
    engine, source, _ = make_engine([step_of(step)])
    source.add("f", handler)
    assert run(engine.start("w", {})).error["type"] == "ValueError" and seen == [1]
    handler, seen = failing(ValueError("no"), StepTimeout("slow"))
    engine, source, _ = make_engine([step_of({**step, "retry": {"attempts": 3, "backoff": 0,
                                                                 "on": ["CallFailed", "Timeout"]}})])
    source.add("f", handler)
    snap = run(engine.start("w", {}))
    assert snap.status == "completed" and snap.output["out"] == 3 and seen == [1, 2, 3]


def test_catch_entries_are_tried_in_order_by_error_type() -> None:
    catch = [{"errors": ["Timeout"], "next": "fallback"}, {"next": "report", "save": "state.err"}]
    outcomes = {}
    for name, error in (("slow", StepTimeout("slow")), ("broken", CapabilityError("broken"))):
        handler, _ = failing(error)
        engine, source, _ = make_engine([step_of({"uses": "t.f", "next": "end", "catch": catch})])
        source.add("f", handler)
        snap = run(engine.start("w", {}))
        outcomes[name] = (snap.outcome, snap.output["err"])
    assert outcomes["slow"] == ("fell_back", None)
    assert outcomes["broken"] == ("reported", {"type": "CapabilityError", "message": "broken", "step": "s"})


def test_a_failure_no_catch_entry_takes_fails_the_run() -> None:
    handler, _ = failing(CapabilityError("broken"))
    engine, source, _ = make_engine([step_of({"uses": "t.f", "next": "end",
                                              "catch": [{"errors": ["Timeout"], "next": "fallback"}]})])
    source.add("f", handler)
    assert run(engine.start("w", {})).error == {"type": "CapabilityError", "message": "broken", "step": "s"}


def test_backoff_doubles_up_to_max_delay_and_full_jitter_stays_within_it() -> None:
    errors = [CapabilityError("again")] * 7
    handler, _ = failing(*errors)
    engine, source, sink = make_engine([step_of({"uses": "t.f", "next": "end", "retry": {
        "attempts": 8, "backoff": 0.001, "max_delay": 0.004}})])
    source.add("f", handler)
    run(engine.start("w", {}))
    assert [e.output["delay"] for e in retries(sink)] == [0.001, 0.002, 0.004, 0.004, 0.004, 0.004, 0.004]

    handler, _ = failing(*errors)
    engine, source, sink = make_engine([step_of({"uses": "t.f", "next": "end", "retry": {
        "attempts": 8, "backoff": 0.001, "max_delay": 0.004, "jitter": "full"}})])
    source.add("f", handler)
    run(engine.start("w", {}))
    delays = [e.output["delay"] for e in retries(sink)]
    bounds = [0.001, 0.002, 0.004, 0.004, 0.004, 0.004, 0.004]
    assert len(delays) == 7 and all(0 <= d <= b for d, b in zip(delays, bounds, strict=True))
    assert delays != bounds  # drawn, not the bounds themselves


def test_a_when_branch_is_skipped_recorded_and_the_join_waits_for_the_taken_ones() -> None:
    state = {"seen": {"type": "array", "reducer": "append", "default": []}}
    branches = {"always": [writer("a1", "state.seen")], "notify": [writer("n1", "state.seen")]}
    when = {"notify": {"eq": ["$input.notify", True]}}
    for notify, seen, outputs in ((False, ["a1"], {"always": "ok", "notify": "skipped"}),
                                  (True, ["a1", "n1"], {"always": "ok", "notify": "ok"})):
        engine, source, sink = make_engine([fork(state, branches, when=when)])
        saying(source)
        snap = run(engine.start("w", {"notify": notify}))
        assert snap.status == "completed" and snap.output == {"seen": seen}
        assert sink.trace[-1].output == outputs
        skipped = [(e.step, e.kind) for e in sink.trace if e.kind == "skipped"]
        assert skipped == ([] if notify else [("par/notify", "skipped")])
        assert ("par/notify/n1" in {e.step for e in sink.trace}) is notify


@pytest.mark.parametrize("crash_at", [3, 4])
def test_a_crash_after_a_skip_resumes_without_asking_the_condition_again(crash_at: int) -> None:
    state = {"seen": {"type": "array", "reducer": "append", "default": []}, "flag": {"default": False}}
    wf = fork(state, {"a": [writer("a1", "state.seen")], "b": [writer("b1", "state.seen")]},
              when={"b": {"eq": ["$state.flag", True]}})
    engine, source, sink = make_engine([wf], sink=MemorySink(crash_at=crash_at))
    saying(source)
    with pytest.raises(Crash):
        run(engine.start("w", {}))
    assert [e.step for e in sink.trace] == ["par/b", "par/a/a1"][:crash_at - 2]
    sink.crash_at = None
    snap = run(engine.resume(sink.last, sink.trace))
    assert snap.status == "completed" and snap.output["seen"] == ["a1"]
    assert [e.step for e in sink.trace].count("par/b") == 1
    assert [e.step for e in sink.trace].count("par/a/a1") == 1


def test_foreach_as_names_the_item() -> None:
    engine, source, _ = make_engine([{
        "name": "w", "state": {"x": {"reducer": "append"}}, "output": {"x": "$state.x"},
        "steps": [{"id": "fan", "foreach": "$input.docs", "as": "doc", "uses": "t.say",
                   "with": {"tag": "$doc.name", "both": ["$doc", "$index"]}, "save_each": {"tag": "state.x"},
                   "next": "end"}]}])
    saying(source)
    snap = run(engine.start("w", {"docs": [{"name": "a"}, {"name": "b"}]}))
    assert snap.output == {"x": ["a", "b"]}
    assert [p["both"] for p, _ in source.called("say")] == [[{"name": "a"}, 0], [{"name": "b"}, 1]]
