"""The rows a run leaves in a real SQLite store, column by column: the step loop's and the
store's hot path may change how they build a step's commit, never what it writes. The
expected rows below were written by the code before the per-step work was cut; only run
ids, timestamps and the time a call took (machine-dependent) are masked."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from wfops.engine.engine import Engine
from wfops.model.plain import validated
from wfops.runner.progress import ProgressSink
from wfops.sources.registry import BoundResolver
from wfops.sources.std import StdSource
from wfops.store.sqlite import SqliteStore

CHILD = {"name": "child", "input": {"type": "object"}, "state": {"n": {"type": "integer"}},
         "output": {"twice": "$state.n"},
         "steps": [{"id": "c1", "uses": "std.echo", "with": {"value": "$input.n"}, "save": {"value": "state.n"},
                    "next": "end"}]}

MAIN = {
    "name": "main",
    "input": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "state": {"n": {"type": "integer"}, "text": {"type": "string"}, "obj": {"type": "object", "default": {}},
              "log": {"type": "array", "reducer": "append", "items": {"type": "string"}},
              "free": {}, "err": {}},
    "output": {"n": "$state.n", "text": "$state.text", "obj": "$state.obj", "log": "$state.log"},
    "steps": [
        {"id": "a", "uses": "std.echo", "with": {"value": "$input.n"}, "save": {"value": "state.n"}, "next": "b"},
        {"id": "b", "uses": "std.format", "with": {"template": "n={n} é", "values": {"n": "$state.n"}},
         "save": {"text": "state.text"}, "next": "c"},
        {"id": "c", "uses": "std.echo", "with": {"value": {"k": "$state.text", "tok": "$secret.TOKEN"}},
         "save": {"value": "state.obj.inner"}, "next": "d"},
        {"id": "d", "uses": "std.echo", "with": {"value": "$state.text"}, "save": {"value": "state.log"},
         "cache": True, "next": "e"},
        {"id": "e", "uses": "std.fail", "with": {"message": "no $$ here"}, "retry": {"attempts": 2, "backoff": 0},
         "catch": {"next": "f", "save": "state.err"}},
        {"id": "f", "if": {"gt": ["$state.n", 1]}, "then": "g", "else": "h"},
        {"id": "g", "workflow": "child", "with": {"n": "$state.n"}, "save": {"twice": "state.free"}, "next": "h"},
        {"id": "h", "uses": "std.echo", "with": {"value": "$context.step"}, "save": {"value": "state.log"},
         "next": "done"},
        {"id": "done", "end": "finished"},
    ],
}

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _rows(db: Path, ids: dict[str, str]) -> list[list[Any]]:
    conn = sqlite3.connect(db)
    try:
        found = []
        for table, order in (("runs", "created_at, id"), ("run_inputs", "run_id"), ("trace", "run_id, seq"), ("step_cache", "key"),
                             ("cache_hits", "run_id, seq")):
            cur = conn.execute(f"SELECT * FROM {table} ORDER BY {order}")  # noqa: S608 - the test's own names
            names = [d[0] for d in cur.description]
            for row in cur.fetchall():
                found.append([table, *(_masked(n, v, ids) for n, v in zip(names, row, strict=True))])
        return found
    finally:
        conn.close()


def _masked(_name: str, value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, float):  # the seconds a call took, or a hit saved
        return "SECONDS"
    if not isinstance(value, str):
        return value
    for run_id, shown in ids.items():
        value = value.replace(run_id, shown)
    value = STAMP.sub("STAMP", value)
    return re.sub(r'"saved":[0-9.e-]+', '"saved":SECONDS', value)


def test_a_runs_rows_are_the_same_column_for_column(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "wfops.db")
    workflows = {"main": validated("workflow", MAIN), "child": validated("workflow", CHILD)}
    ids = {"run-one-0000": "RUN1", "run-two-0000": "RUN2"}
    try:
        for run_id, n in (("run-one-0000", 3), ("run-two-0000", 3)):
            store.begin_run(run_id, artifacts={"main": "m" * 64, "child": "c" * 64},
                            normalized={"m" * 64: MAIN, "c" * 64: CHILD}, meta={"project": "p"})
            engine = Engine(workflows, BoundResolver({"std": StdSource()}), ProgressSink(store),
                            deployment="main.local", secrets={"TOKEN": "s3cr3t-value"},
                            artifacts={"main": "m" * 64, "child": "c" * 64}, cache=store)
            snapshot = asyncio.run(engine.start("main", {"n": n}, run_id=run_id))
            assert snapshot.status == "completed", snapshot.error
    finally:
        store.close()
    assert _rows(tmp_path / "wfops.db", ids) == EXPECTED


EXPECTED: list[list[Any]] = json.loads(r"""[
["runs", "RUN1", "main.local", "main", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "completed", "finished", "{\"n\":3,\"text\":\"n=3 é\",\"obj\":{\"inner\":{\"k\":\"n=3 é\",\"tok\":\"***\"}},\"log\":[\"n=3 é\",\"h\"]}", null, null, "{\"seq\":11,\"step\":\"done\"}", 11, "STAMP", "STAMP", 11, null],
["runs", "RUN2", "main.local", "main", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "completed", "finished", "{\"n\":3,\"text\":\"n=3 é\",\"obj\":{\"inner\":{\"k\":\"n=3 é\",\"tok\":\"***\"}},\"log\":[\"n=3 é\",\"h\"]}", null, null, "{\"seq\":11,\"step\":\"done\"}", 11, "STAMP", "STAMP", 11, null],
["run_inputs", "RUN1", "{\"n\":3}", "{\"project\":\"p\"}"],
["run_inputs", "RUN2", "{\"n\":3}", "{\"project\":\"p\"}"],
["trace", "RUN1", 1, "a", "call", 1, "{\"value\":3}", "ok", "{\"value\":3}", "[{\"path\":\"state.n\",\"value\":3}]", "b", null, "STAMP", "STAMP", "{\"seq\":1,\"step\":\"a\"}", null],
["trace", "RUN1", 2, "b", "call", 1, "{\"template\":\"n={n} é\",\"values\":{\"n\":3}}", "ok", "{\"text\":\"n=3 é\"}", "[{\"path\":\"state.text\",\"value\":\"n=3 é\"}]", "c", null, "STAMP", "STAMP", "{\"seq\":2,\"step\":\"b\"}", null],
["trace", "RUN1", 3, "c", "call", 1, "{\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}", "ok", "{\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}", "[{\"path\":\"state.obj.inner\",\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}]", "d", null, "STAMP", "STAMP", "{\"seq\":3,\"step\":\"c\"}", null],
["trace", "RUN1", 4, "d", "call", 1, "{\"value\":\"n=3 é\"}", "ok", "{\"value\":\"n=3 é\"}", "[{\"path\":\"state.log\",\"value\":\"n=3 é\"}]", "e", null, "STAMP", "STAMP", "{\"seq\":4,\"step\":\"d\"}", null],
["trace", "RUN1", 5, "e", "retry", 1, "{\"message\":\"no $$ here\"}", null, "{\"delay\":0.0}", "[]", null, "{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}", "STAMP", "STAMP", "{\"seq\":5,\"step\":\"e\"}", null],
["trace", "RUN1", 6, "e", "call", 2, "{\"message\":\"no $$ here\"}", null, null, "[{\"path\":\"state.err\",\"value\":{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}}]", "f", "{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}", "STAMP", "STAMP", "{\"seq\":6,\"step\":\"e\"}", null],
["trace", "RUN1", 7, "f", "condition", 1, "{\"gt\":[3,1]}", "then", null, "[]", "g", null, "STAMP", "STAMP", "{\"seq\":7,\"step\":\"f\"}", null],
["trace", "RUN1", 8, "g/c1", "call", 1, "{\"value\":3}", "ok", "{\"value\":3}", "[{\"path\":\"state.n\",\"value\":3}]", "end", null, "STAMP", "STAMP", "{\"seq\":8,\"step\":\"g/c1\"}", null],
["trace", "RUN1", 9, "g", "workflow", 1, "{\"n\":3}", "ok", "{\"twice\":3}", "[{\"path\":\"state.free\",\"value\":3}]", "h", null, "STAMP", "STAMP", "{\"seq\":9,\"step\":\"g\"}", null],
["trace", "RUN1", 10, "h", "call", 1, "{\"value\":\"h\"}", "ok", "{\"value\":\"h\"}", "[{\"path\":\"state.log\",\"value\":\"h\"}]", "done", null, "STAMP", "STAMP", "{\"seq\":10,\"step\":\"h\"}", null],
["trace", "RUN1", 11, "done", "end", 1, null, "finished", null, "[]", null, null, "STAMP", "STAMP", null, null],
["trace", "RUN2", 1, "a", "call", 1, "{\"value\":3}", "ok", "{\"value\":3}", "[{\"path\":\"state.n\",\"value\":3}]", "b", null, "STAMP", "STAMP", "{\"seq\":1,\"step\":\"a\"}", null],
["trace", "RUN2", 2, "b", "call", 1, "{\"template\":\"n={n} é\",\"values\":{\"n\":3}}", "ok", "{\"text\":\"n=3 é\"}", "[{\"path\":\"state.text\",\"value\":\"n=3 é\"}]", "c", null, "STAMP", "STAMP", "{\"seq\":2,\"step\":\"b\"}", null],
["trace", "RUN2", 3, "c", "call", 1, "{\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}", "ok", "{\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}", "[{\"path\":\"state.obj.inner\",\"value\":{\"k\":\"n=3 é\",\"tok\":\"***\"}}]", "d", null, "STAMP", "STAMP", "{\"seq\":3,\"step\":\"c\"}", null],
["trace", "RUN2", 4, "d", "call", 1, "{\"value\":\"n=3 é\"}", "ok", "{\"value\":\"n=3 é\"}", "[{\"path\":\"state.log\",\"value\":\"n=3 é\"}]", "e", null, "STAMP", "STAMP", "{\"seq\":4,\"step\":\"d\"}", null],
["trace", "RUN2", 5, "e", "retry", 1, "{\"message\":\"no $$ here\"}", null, "{\"delay\":0.0}", "[]", null, "{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}", "STAMP", "STAMP", "{\"seq\":5,\"step\":\"e\"}", null],
["trace", "RUN2", 6, "e", "call", 2, "{\"message\":\"no $$ here\"}", null, null, "[{\"path\":\"state.err\",\"value\":{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}}]", "f", "{\"type\":\"CapabilityError\",\"message\":\"no $$ here\",\"step\":\"e\"}", "STAMP", "STAMP", "{\"seq\":6,\"step\":\"e\"}", null],
["trace", "RUN2", 7, "f", "condition", 1, "{\"gt\":[3,1]}", "then", null, "[]", "g", null, "STAMP", "STAMP", "{\"seq\":7,\"step\":\"f\"}", null],
["trace", "RUN2", 8, "g/c1", "call", 1, "{\"value\":3}", "ok", "{\"value\":3}", "[{\"path\":\"state.n\",\"value\":3}]", "end", null, "STAMP", "STAMP", "{\"seq\":8,\"step\":\"g/c1\"}", null],
["trace", "RUN2", 9, "g", "workflow", 1, "{\"n\":3}", "ok", "{\"twice\":3}", "[{\"path\":\"state.free\",\"value\":3}]", "h", null, "STAMP", "STAMP", "{\"seq\":9,\"step\":\"g\"}", null],
["trace", "RUN2", 10, "h", "call", 1, "{\"value\":\"h\"}", "ok", "{\"value\":\"h\"}", "[{\"path\":\"state.log\",\"value\":\"h\"}]", "done", null, "STAMP", "STAMP", "{\"seq\":10,\"step\":\"h\"}", null],
["trace", "RUN2", 11, "done", "end", 1, null, "finished", null, "[]", null, null, "STAMP", "STAMP", null, null],
["step_cache", "ef16a51330adbd3ab4ea307c8a81d914c46be0b59e940d122ada30da089a04f1", "main.local", "std.echo", "aa7665ef8e124bc2806f09371f14c10396ca39359ace2a17f6dfa5c4d4d4de46", "ok", "{\"value\":\"n=3 é\"}", null, "RUN1", "d", 4, "SECONDS", 17, 1, "STAMP", "STAMP"],
["cache_hits", "RUN2", 4, "ef16a51330adbd3ab4ea307c8a81d914c46be0b59e940d122ada30da089a04f1", "RUN1", "d", 4, "SECONDS"]
]""")
