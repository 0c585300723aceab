"""A step whose result the store cannot hold fails the run with the reason; the run is never
left `running` (a resume would only meet the same value again). Values are checked where
they enter (the CLI, the API, a call's contract); the engine taken as a library checks
nothing of a resume payload's JSON, so that is how a bad value reaches a real store here."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from wfops.errors import StoreError, UnstorableValue
from wfops.store import open_store

from .helpers import make_engine, run

ASK = {
    "name": "ask",
    "input": {"type": "object"},
    "state": {"answer": {}},
    "output": {"answer": "$state.answer"},
    "steps": [
        {"id": "ask", "interrupt": "approval", "resume_schema": {"type": "object"},
         "save": "state.answer", "on": {"approved": "end"}},
    ],
}


@pytest.mark.parametrize("payload", [{"n": float("nan")}, {"n": 10 ** 5000}, {"text": "a\udc80"}])
def test_an_unstorable_result_fails_the_run_instead_of_leaving_it_running(tmp_path: Path, payload: dict) -> None:
    store = open_store(tmp_path / "runs.db")
    store.begin_run("R", artifacts={"ask": "h"}, normalized={"h": ASK}, meta={})
    engine, _, _ = make_engine([ASK], sink=store)  # type: ignore[arg-type] - the real store is a sink
    waiting = run(engine.start("ask", {}, run_id="R"))
    assert waiting.status == "interrupted"
    record = store.get_run("R")
    trace = store.trace("R")
    final = run(engine.resume(record.snapshot, trace, outcome="approved", payload=payload))
    assert final.status == "failed"
    assert final.error is not None and final.error["type"] == "UnstorableValue"
    assert "cannot be stored as JSON" in final.error["message"]
    stored = store.get_run("R").snapshot
    assert (stored.status, stored.error) == ("failed", final.error)
    entries = store.trace("R")
    assert [(e.seq, e.step, e.output, e.state_changes) for e in entries] == [(1, "ask", None, []), (2, "ask", None, [])]
    assert entries[-1].error == final.error
    store.close()
    conn = sqlite3.connect(tmp_path / "runs.db")
    assert conn.execute("SELECT status FROM runs").fetchall() == [("failed",)]
    conn.close()


def test_the_store_names_the_problem_and_never_writes_a_nan(tmp_path: Path) -> None:
    from tests.store.test_contract import entry, snap, start

    store = open_store(tmp_path / "runs.db")
    start(store)
    with pytest.raises(UnstorableValue, match="a number is not finite"):
        store.commit(snap(), [entry(1, output={"x": float("inf")})])
    with pytest.raises(UnstorableValue, match="an integer has too many digits"):
        store.commit(snap(), [entry(1, output={"x": 10 ** 5000})])
    with pytest.raises(UnstorableValue, match="not valid Unicode"):
        store.commit(snap(), [entry(1, output={"x": "\udc80"})])
    assert not isinstance(UnstorableValue("x"), StoreError)  # a value's fault, not the store's (exit 1, not 4)
    store.commit(snap(), [entry(1)])
    assert [e.seq for e in store.trace("r1")] == [1]
    store.close()
