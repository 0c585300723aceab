"""A state field's reducer must suit its declared type."""

from __future__ import annotations

from wfops.compiler.checks.context import Sink
from wfops.compiler.checks.jsontypes import NUMERIC, describe, sch, types_of
from wfops.loader.project import Loaded

_NEEDS = {"append": frozenset({"array"}), "extend": frozenset({"array"}), "union": frozenset({"array"}),
          "add": NUMERIC, "min": NUMERIC, "max": NUMERIC, "merge": frozenset({"object"})}


def check_reducers(loaded: Loaded, sink: Sink) -> None:
    for name, declared in loaded.model.state.items():
        needs = _NEEDS.get(declared.reducer)
        types = types_of(sch(declared.json_schema()))
        if needs is not None and types is not None and not types & needs:
            sink.error("invalid-reducer", f"state field `{name}` is {describe(types)}, but reducer "
                       f"`{declared.reducer}` needs {describe(needs)}", loaded, ("state", name, "reducer"),
                       hint=f"declare `{name}` as `type: {sorted(needs)[0]}`, or use another reducer")
