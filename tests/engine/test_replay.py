"""Property: replaying the recorded writes through the reducers rebuilds the state the run
ended with, whatever the reducers and writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wfops.engine.frame import new_frame

from .helpers import make_engine, run

scalars = st.one_of(st.integers(-5, 5), st.text(max_size=3).filter(lambda t: not t.startswith("$")), st.booleans(), st.none())
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=2), scalars, max_size=2))
numbers = st.integers(-100, 100)
REDUCER_VALUES = {"replace": values, "append": values, "extend": st.lists(scalars, max_size=3),
                  "union": values, "merge": st.dictionaries(st.text(max_size=2), scalars, max_size=2),
                  "add": numbers, "min": numbers, "max": numbers}
writes = st.lists(st.sampled_from(sorted(REDUCER_VALUES)).flatmap(
    lambda r: st.tuples(st.just(r), REDUCER_VALUES[r])), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(writes)
def test_replaying_state_changes_rebuilds_the_final_state(plan: list[tuple[str, object]]) -> None:
    fields = {r: {"reducer": r} for r in REDUCER_VALUES}
    steps = [{"id": f"s{i}", "uses": "std.echo", "with": {"value": v}, "save": {"value": f"state.{r}"},
              "next": f"s{i + 1}" if i + 1 < len(plan) else "end"} for i, (r, v) in enumerate(plan)]
    wf = {"name": "p", "state": fields, "output": {"state": "$state"}, "steps": steps}
    engine, _, sink = make_engine([wf])
    snap = run(engine.start("p", {}))
    assert snap.status == "completed"
    rebuilt = new_frame(engine.plan("p"), {}, trace=sink.trace)
    assert rebuilt.state == snap.output["state"]
    assert rebuilt.outcome == "ok"
