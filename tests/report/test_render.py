"""Every reporter, checked against exact output."""

from __future__ import annotations

import io
import json

import pytest

from wfops.diagnostics import Diagnostic, error, warning
from wfops.errors import UsageError
from wfops.exits import for_error
from wfops.report import FORMATS, render

DIAGS = [
    warning("unreachable-step", "step `b` is never reached", "workflows/a.yaml", (9, 5)),
    error("unknown-key", "unknown key `uzes` in steps.0", "workflows/a.yaml", (3, 7),
          hint="remove it or fix its spelling"),
    error("yaml-syntax", "invalid YAML: bad, really: 100%\nsecond line", "dir,x/b:c.yaml", (1, 2)),
]


def rendered(diagnostics: list[Diagnostic], fmt: str) -> str:
    out = io.StringIO()
    render(diagnostics, fmt, out)
    return out.getvalue()


def test_text_exact() -> None:
    assert rendered(DIAGS, "text") == (
        "dir,x/b:c.yaml:1:2: error[yaml-syntax] invalid YAML: bad, really: 100%\nsecond line\n"
        "workflows/a.yaml:3:7: error[unknown-key] unknown key `uzes` in steps.0\n"
        "  hint: remove it or fix its spelling\n"
        "workflows/a.yaml:9:5: warning[unreachable-step] step `b` is never reached\n"
        "2 errors, 1 warning\n"
    )


def test_text_summaries() -> None:
    assert rendered([], "text") == "ok: no problems\n"
    assert rendered(DIAGS[:1], "text").endswith("\n0 errors, 1 warning\n")
    note = Diagnostic("info", "fyi", "m", "f.yaml")
    assert rendered([DIAGS[1], note], "text").endswith("\n1 error, 1 note\n")


def test_json_shape() -> None:
    data = json.loads(rendered(DIAGS, "json"))
    assert data["ok"] is False
    assert [d["code"] for d in data["diagnostics"]] == ["yaml-syntax", "unknown-key", "unreachable-step"]
    assert data["diagnostics"][1] == {
        "severity": "error", "code": "unknown-key", "message": "unknown key `uzes` in steps.0",
        "file": "workflows/a.yaml", "line": 3, "column": 7, "hint": "remove it or fix its spelling",
    }
    assert data["diagnostics"][2]["hint"] is None


def test_json_ok_with_only_warnings() -> None:
    assert json.loads(rendered(DIAGS[:1], "json"))["ok"] is True
    assert json.loads(rendered([], "json")) == {"ok": True, "diagnostics": []}


def test_github_exact_and_escaped() -> None:
    lines = rendered(DIAGS, "github").splitlines()
    assert lines == [
        "::error file=dir%2Cx/b%3Ac.yaml,line=1,col=2,title=wfops yaml-syntax::"
        "invalid YAML: bad, really: 100%25%0Asecond line",
        "::error file=workflows/a.yaml,line=3,col=7,title=wfops unknown-key::"
        "unknown key `uzes` in steps.0%0Ahint: remove it or fix its spelling",
        "::warning file=workflows/a.yaml,line=9,col=5,title=wfops unreachable-step::"
        "step `b` is never reached",
        "2 errors, 1 warning",
    ]


def test_github_carriage_return_and_notice() -> None:
    d = Diagnostic("info", "c", "a\rb", "f\r.yaml")
    assert rendered([d], "github").splitlines()[0] == (
        "::notice file=f%0D.yaml,line=1,col=1,title=wfops c::a%0Db")


def test_sarif_complete() -> None:
    # Validity against the official SARIF 2.1.0 schema and GitHub's ingestion rules:
    # tests/report/test_sarif_multitool.py, with Microsoft's SARIF Multitool.
    data = json.loads(rendered(DIAGS, "sarif"))
    run = data["runs"][0]
    assert run["tool"]["driver"]["name"] == "wfops"
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["yaml-syntax", "unknown-key", "unreachable-step"]
    first = run["tool"]["driver"]["rules"][0]
    assert first["name"] == "YamlSyntax" and first["shortDescription"]["text"] == "YAML the parser rejects"
    assert first["fullDescription"]["text"] and first["help"]["text"] and first["helpUri"].startswith("https://")
    assert run["tool"]["driver"]["informationUri"].startswith("https://")
    levels = [r["level"] for r in run["results"]]
    assert levels == ["error", "error", "warning"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
    second = run["results"][1]
    assert second["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "workflows/a.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 7},
    }
    assert second["message"]["text"].endswith("\nhint: remove it or fix its spelling")
    # Relative and percent-encoded: a comma is fine in a URI path, a space is not.
    spaced = json.loads(rendered([error("yaml-syntax", "m", "my dir/a.yaml")], "sarif"))
    assert spaced["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"] == "my%20dir/a.yaml"


def test_sarif_info_is_note_and_empty_run() -> None:
    data = json.loads(rendered([Diagnostic("info", "c", "m", "f.yaml")], "sarif"))
    assert data["runs"][0]["results"][0]["level"] == "note"
    empty = json.loads(rendered([], "sarif"))
    assert empty["runs"][0]["results"] == [] and empty["runs"][0]["tool"]["driver"]["rules"] == []


def test_unknown_format_is_usage_error() -> None:
    with pytest.raises(UsageError) as info:
        render(DIAGS, "xml", io.StringIO())
    assert for_error(info.value) == 2
    assert "xml" in info.value.message and "sarif" in (info.value.hint or "")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_handles_unicode_and_empty(fmt: str) -> None:
    d = error("yaml-syntax", "naïve ✓ message", "wörk/ä.yaml", (2, 3), hint="ünïcode")
    assert "ä" in rendered([d], fmt) or "%C3%A4" in rendered([d], fmt)
    rendered([], fmt)
