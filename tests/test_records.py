"""The shared records (`wfops.records.Record`) behave as the frozen dataclasses they replaced:
built by position and keyword with their defaults, equal and hashed by their fields, shown by
field, immutable, changed by `replace()`, and they survive pickling and copying."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from wfops.api.findings import Report
from wfops.diagnostics import Diagnostic, error
from wfops.model.paths import ValuePath, parse_path
from wfops.records import Record, init
from wfops.sources.base import CallResult, Capability, CapabilityRef, StepContext, step_context
from wfops.sources.python import NodeContext


def finding(**subject: str) -> Diagnostic:
    return Diagnostic("error", "yaml-syntax", "no step `b`", "workflows/w.yaml", 3, 7, "add it", **subject)


def test_built_by_position_and_keyword_with_defaults() -> None:
    d = Diagnostic("warning", "c", "m", "f")
    assert (d.line, d.column, d.hint, d.workflow, d.deployment, d.source, d.step) == (1, 1, None, None, None, None, None)
    assert finding(step="a").step == "a" and finding(step="a").workflow is None
    with pytest.raises(TypeError):
        Diagnostic("error", "c", "m", "f", 1, 1, None, "w")  # type: ignore[misc]  # the subject is keyword-only
    assert CallResult() == CallResult("ok", None, None)
    assert Report([]).checked == [] and Report([]).static_checks and Report([]).verified == {}
    assert Report([]).checked is not Report([]).checked  # each its own list, as a default_factory made


def test_equal_and_hashed_by_fields() -> None:
    assert finding() == finding() and hash(finding()) == hash(finding())
    assert finding() != finding(step="a") and finding() != finding().replace(line=4)
    assert len({finding(), finding(), finding(step="a")}) == 2  # findings are dict keys and set members
    assert parse_path("$input.a.0") == ValuePath("input", ("a", 0), "$input.a.0")
    assert {CapabilityRef.parse("std.echo"): 1}[CapabilityRef("std", "echo")] == 1
    assert finding() != ("error", "yaml-syntax")  # not a tuple
    context = step_context("r", "wf", None, "s", 1, "k")
    # a subclass is another kind of record, even with the same fields set
    assert NodeContext("r", "wf", None, "s", 1, "k") != context
    with pytest.raises(TypeError, match="unhashable"):
        hash(context)  # it holds a dict, as the dataclass did


def test_equality_leaves_out_what_is_not_the_contract() -> None:
    cap = Capability("py", "f", {"type": "object"}, {"type": "object"})
    assert cap == cap.replace(annotations={"readOnlyHint": True}, code="abc", cache=True)
    assert cap != cap.replace(defaults={"timeout": 5}) and cap != cap.replace(pins={"script": "x"})
    assert cap.annotations == {} and cap.annotations is not Capability("py", "g", {}, {}).annotations


def test_shown_by_field() -> None:
    assert repr(ValuePath("item", (), "$item")) == "ValuePath(root='item', parts=(), text='$item')"
    assert repr(CallResult("ok", {"a": 1})) == "CallResult(outcome='ok', output={'a': 1}, extra=None)"
    assert str(CapabilityRef("std", "echo")) == "std.echo"


def test_immutable_and_changed_by_replace() -> None:
    d = finding()
    with pytest.raises(AttributeError, match="Diagnostic is immutable"):
        d.line = 9  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del d.hint
    with pytest.raises(AttributeError):
        d.other = 1  # type: ignore[attr-defined]  # slots: no new attributes either
    changed = d.replace(severity="warning", deployment="a, b")
    assert (changed.severity, changed.deployment, changed.message) == ("warning", "a, b", d.message)
    assert d.severity == "error"  # the original stands
    with pytest.raises(TypeError):
        d.replace(colour="red")
    node = NodeContext("r", "wf", None, "s", 1, "k", project_root=Path("/p"))
    assert node.replace(attempt=2) == NodeContext("r", "wf", None, "s", 2, "k", {}, Path("/p"))


def test_pickled_and_copied() -> None:
    for record in (finding(step="a"), Capability("py", "f", {}, {}, ("ok", "no"), code="h"),
                   NodeContext("r", "wf", "d", "s", 1, "k", {"x": 1}, Path("/p")), Report([error("yaml-syntax", "m", "f")])):
        for again in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
            assert type(again) is type(record) and again == record and repr(again) == repr(record)


def test_a_record_declares_its_fields_once() -> None:
    class Point(Record, uncompared=("label",)):
        __slots__ = ("x", "y", "label")

        def __init__(self, x: int, y: int, label: str = "") -> None:
            init(self, "x", x)
            init(self, "y", y)
            init(self, "label", label)

    class Spot(Point):
        __slots__ = ("z",)

        def __init__(self, x: int, y: int, label: str = "", z: int = 0) -> None:
            super().__init__(x, y, label)
            init(self, "z", z)

    assert Spot._fields == ("x", "y", "label", "z") and Spot._compared == ("x", "y", "z")
    assert Point(1, 2, "a") == Point(1, 2, "b") and Spot(1, 2, z=3) != Spot(1, 2)
    assert StepContext._fields == ("run_id", "workflow", "deployment", "step", "attempt", "idempotency_key", "extra")


def test_slots_and_annotations_that_differ_are_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="annotated fields"):
        class Drifted(Record):
            __slots__ = ("x", "y")
            x: int
            z: int

            def __init__(self, x: int) -> None:
                init(self, "x", x)
