"""Acceptance: the platform source `std`, driven as a user would, through `wfops caps`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import CliResult, run_cli
from wfops.errors import CapabilityError
from wfops.sources.base import StepContext
from wfops.sources.std import StdSource

CTX = StepContext(run_id="r", workflow="w", deployment=None, step="s", attempt=1, idempotency_key="k")


def fmt(template: str, values: dict) -> str:
    result = asyncio.run(StdSource().call("format", {"template": template, "values": values}, CTX))
    return result.output["text"]


def wfops(args: list[str], cwd: Path) -> CliResult:
    return run_cli(*args, cwd=cwd)


def test_named_placeholders_specs_and_literal_braces() -> None:
    assert fmt("hi {name}", {"name": "ana"}) == "hi ana"
    assert fmt("{{x}} {n:>3} {f:.2f} {s:*^6}", {"n": 7, "f": 2.345, "s": "ab"}) == "{x}   7 2.35 **ab**"


def test_nested_values_are_read_by_key_and_index() -> None:
    values = {"r": {"title": "T", "items": ["a", "b"]}}
    assert fmt("{r.title}: {r[items][1]} {r.items.0}", values) == "T: b a"


def test_non_string_values_are_written_as_json_not_python() -> None:
    values = {"t": True, "n": None, "o": {"k": [1, "é"]}, "x": 1.5, "i": 3}
    assert fmt("{t} {n} {o} {x} {i}", values) == 'true null {"k": [1, "é"]} 1.5 3'
    assert fmt("{s!r} {t!s}", {"s": "q", "t": False}) == '"q" false'


@pytest.mark.parametrize("template", ["{v.__class__}", "{v.__class__.__mro__}", "{v[__class__]}"])
def test_attribute_access_never_reaches_python_objects(template: str) -> None:
    with pytest.raises(CapabilityError, match="no `__class__`"):
        fmt(template, {"v": 1})


@pytest.mark.parametrize("template", ["{v:999999999}", "{v:.99999999f}", "{v:{w}}"])
def test_huge_widths_fail_fast_instead_of_eating_memory(template: str) -> None:
    with pytest.raises(CapabilityError, match="not allowed"):
        fmt(template, {"v": 1.0, "w": 10**9})


@pytest.mark.parametrize(("template", "values", "words"), [
    ("{missing}", {}, "has no value"),
    ("{}", {"a": 1}, "positional"),
    ("{0}", {"a": 1}, "positional"),
    ("{", {}, "bad template"),
    ("{a:d}", {"a": "x"}, "bad template"),
    ("{a[3]}", {"a": [1]}, "no `3`"),
])
def test_bad_templates_are_step_failures(template: str, values: dict, words: str) -> None:
    with pytest.raises(CapabilityError, match=words):
        fmt(template, values)


def test_caps_call_and_show_document_format(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n",
                            "in.json": '{"template": "{r.title}={ok}", "values": {"r": {"title": "t"}, "ok": true}}'})
    done = wfops(["caps", "call", "std.format", "--input-file", "in.json"], root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"outcome": "ok", "output": {"text": "t=true"}}
    shown = wfops(["caps", "show", "std.format"], root)
    assert shown.returncode == 0 and "{a.b}" in shown.stdout and "as JSON" in shown.stdout


def test_caps_call_with_a_huge_width_exits_1_quickly(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources: {}\n",
                            "in.json": '{"template": "{a:999999999}", "values": {"a": 1}}'})
    done = wfops(["caps", "call", "std.format", "--input-file", "in.json"], root)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "not allowed" in done.stderr


@pytest.mark.parametrize(("payload", "words"), [
    ({"template": "{a}", "values": "abc"}, "`values` must be an object"),
    ({"template": "{a}", "values": None}, "`values` must be an object"),
    ({"template": 3, "values": {}}, "`template` must be a string"),
])
def test_wrong_payload_types_fail_the_step_clearly(payload: dict, words: str) -> None:
    with pytest.raises(CapabilityError, match=words):
        asyncio.run(StdSource().call("format", payload, CTX))
