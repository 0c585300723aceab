"""Small in-process pieces of the runner: input assembly, secrets, progress lines."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from wfops.api.inputs import read_input_file as _read_input_file
from wfops.cli.inputs import parse_assignments
from wfops.cli.progress import ProgressPrinter
from wfops.engine.types import TraceEntry
from wfops.errors import RefusedError, UsageError
from wfops.report.trace import describe
from wfops.runner.inputs import merge, read_secrets, refuse_secret_values


def read_input_file(path):
    return _read_input_file(str(path), "--input-file")


def test_assignments_parse_json_or_string_and_nest() -> None:
    got = parse_assignments(["n=3", "name=ana", "flag=true", "tags=[\"a\"]", "a.b=1", "a.c={\"d\": 2}",
                             "id=\"007\"", "empty="])
    assert got == {"n": 3, "name": "ana", "flag": True, "tags": ["a"], "a": {"b": 1, "c": {"d": 2}},
                   "id": "007", "empty": ""}


@pytest.mark.parametrize("bad", ["novalue", "=1", "a..b=1", ".a=1"])
def test_bad_assignments_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_assignments([bad])


def test_merge_is_deep_for_mappings_only() -> None:
    base = {"a": {"x": 1, "y": 2}, "l": [1, 2], "s": "keep"}
    assert merge(base, {"a": {"y": 3}, "l": [9]}) == {"a": {"x": 1, "y": 3}, "l": [9], "s": "keep"}
    assert base == {"a": {"x": 1, "y": 2}, "l": [1, 2], "s": "keep"}  # untouched


def test_input_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"n": 1, "o": {"k": "v"}}')
    (tmp_path / "b.yaml").write_text("n: 2\n")
    (tmp_path / "list.yaml").write_text("- 1\n")
    (tmp_path / "broken.yaml").write_text("a: [1\n")
    assert read_input_file(tmp_path / "a.json") == {"n": 1, "o": {"k": "v"}}
    assert read_input_file(tmp_path / "b.yaml") == {"n": 2}
    with pytest.raises(RefusedError, match="mapping"):
        read_input_file(tmp_path / "list.yaml")
    with pytest.raises(RefusedError, match="broken.yaml"):
        read_input_file(tmp_path / "broken.yaml")
    with pytest.raises(UsageError, match="no such file"):
        read_input_file(tmp_path / "missing.yaml")


def test_secrets_come_from_the_environment() -> None:
    assert read_secrets(["A"], {"A": "1", "B": "2"}) == {"A": "1"}
    with pytest.raises(RefusedError, match="B, C"):
        read_secrets(["A", "B", "C"], {"A": "1"})


def entry(**kw) -> TraceEntry:
    base = dict(seq=3, step="extract", kind="call", attempt=1, input={}, outcome="ok", output={},
                state_changes=[], next="render", error=None, started_at="2026-01-01T00:00:00.000Z",
                ended_at="2026-01-01T00:00:00.012Z")
    base.update(kw)
    return TraceEntry(**base)


class _Walked(dict[str, object]):
    """A mapping that counts the walks of its items (the secret check's walk of an input)."""

    walks = 0

    def items(self):  # type: ignore[override]
        type(self).walks += 1
        return super().items()


def test_an_input_is_walked_for_secrets_only_when_a_secret_has_a_value() -> None:
    given = _Walked(ns=list(range(3)), note="plain")
    refuse_secret_values(given, {}, "input")
    refuse_secret_values(given, {"EMPTY": ""}, "input")  # an empty value is in every string: never looked for
    assert _Walked.walks == 0
    refuse_secret_values(given, {"TOKEN": "s3cret"}, "input")
    assert _Walked.walks == 1
    with pytest.raises(UsageError, match="input `note` holds the value of the secret TOKEN"):
        refuse_secret_values(_Walked(note="a s3cret here"), {"EMPTY": "", "TOKEN": "s3cret"}, "input")


def test_progress_lines() -> None:
    assert describe(entry()) == "  #3 extract [call] ok -> render (12 ms)"
    failed = describe(entry(outcome=None, next=None, error={"type": "Timeout", "message": "slow"}))
    assert "error Timeout: slow" in failed
    waiting = describe(entry(kind="interrupt", outcome=None, next=None))
    assert "waiting" in waiting


def test_progress_keeps_finished_lines_on_a_terminal() -> None:
    live, plain = io.StringIO(), io.StringIO()
    for printer in (ProgressPrinter(live, live=True), ProgressPrinter(plain, live=False)):
        printer(entry(seq=1))
        printer(entry(seq=2))
        printer.done()
    # Finished steps stay on screen as whole lines on a terminal too (a live region, if any, is erased).
    assert [line for line in live.getvalue().splitlines() if "#" in line] == [
        "  #1 extract [call] ok -> render (12 ms)", "  #2 extract [call] ok -> render (12 ms)"]
    assert plain.getvalue().count("\n") == 2 and "\x1b" not in plain.getvalue()
