"""`wfops test` / `Project.test`: workflow test cases with mocked capabilities."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import wfops
from tests.harness import cli
from tests.testing.conftest import add_test


def run(root: Path, text: str) -> wfops.TestReport:
    add_test(root, text)
    return wfops.Project(root).test()


def test_a_passing_and_a_failing_case_with_its_diff(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: small value
            input: {q: a}
            mocks:
              nodes.fetch: {output: {value: 3}}
              classify: {output: {value: 3}}
            expect: {status: completed, outcome: ok, output: {value: 3}, path: [fetch, classify, end],
                     state: {value: 3}}
          - name: wrong expectation
            input: {q: a}
            mocks:
              fetch: {output: {value: 30}}
              nodes.classify: {outcome: big, output: {value: 30}}
            expect: {outcome: ok, path: [fetch, classify, end]}
        """)
    assert [c.status for c in report.cases] == ["passed", "failed"]
    assert report.cases[0].line == 3 and report.cases[0].file == "tests/t.wftest.yaml"
    failed = report.cases[1]
    assert "outcome" in failed.message and "path" in failed.message
    assert '-  "outcome": "ok"' in failed.diff and '+  "outcome": "big"' in failed.diff
    assert '+    "big"' in failed.diff
    assert failed.actual["path"] == ["fetch", "classify", "big"]
    assert not report.ok and not report.invalid


def test_successive_mocks_drive_a_retry(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: third time lucky
            mocks:
              fetch: [{error: timeout}, {error: {type: Flaky, message: again}}, {output: {value: 1}}]
              classify: {output: {value: 1}}
            expect: {status: completed, outcome: ok, state: {value: 1}}
          - name: mocks run out
            mocks:
              fetch: [{error: timeout}]
            expect: {status: completed}
        """)
    assert report.cases[0].status == "passed", report.cases[0].message
    assert report.cases[1].status == "error"
    assert "step fetch" in report.cases[1].message and "used up" in report.cases[1].message


def test_an_error_mock_is_routed_through_catch(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: fetch keeps failing
            mocks:
              fetch: {error: {type: Unavailable, message: down}}
            expect:
              status: completed
              outcome: fallback
              path: [fetch, fallback, failed_over]
              state: {err: {type: Unavailable, message: down, step: fetch}}
        """)
    assert report.cases[0].status == "passed", (report.cases[0].message, report.cases[0].diff)


def test_an_interrupt_answered_by_the_case(project: Path) -> None:
    report = run(project, """
        workflow: ask
        cases:
          - name: approved
            interrupts: {approve: {outcome: "yes", payload: {by: ana}}}
            expect: {status: completed, outcome: ok, output: {by: ana}, path: [approve, end]}
          - name: refused
            interrupts: {approve: {outcome: "no", payload: {by: bo}}}
            expect: {status: completed, outcome: refused, path: [approve, refused]}
          - name: unanswered
            expect: {status: interrupted}
          - name: a payload the resume schema refuses
            interrupts: {approve: {outcome: "yes", payload: {}}}
            expect: {status: completed}
        """)
    assert [c.status for c in report.cases] == ["passed", "passed", "passed", "error"]
    assert "resume_schema" in report.cases[3].message


def test_a_foreach_with_per_item_mocks(project: Path) -> None:
    report = run(project, """
        workflow: fan
        cases:
          - name: per item
            input: {qs: [a, b]}
            mocks:
              "each[0]": {output: {value: 1}}
              "each[1]": {output: {value: 2}}
            expect: {status: completed, output: {values: [1, 2]}}
          - name: successive calls
            input: {qs: [a, b, c]}
            mocks:
              nodes.fetch: [{output: {value: 7}}, {output: {value: 8}}, {output: {value: 9}}]
            expect: {output: {values: [7, 8, 9]}, path: [each, end]}
        """)
    assert [c.status for c in report.cases] == ["passed", "passed"], [c.message + c.diff for c in report.cases]


def test_a_subworkflow(project: Path) -> None:
    report = run(project, """
        workflow: outer
        cases:
          - name: the child's steps are mocked by path and by ref
            mocks:
              sub/fetch: {output: {value: 50}}
              nodes.classify: {outcome: big, output: {value: 50}}
            expect: {status: completed, output: {got: {value: 50}}, path: [sub, end]}
          - name: by step id
            mocks:
              fetch: {output: {value: 5}}
              classify: {output: {value: 5}}
            expect: {output: {got: {value: 5}}}
        """)
    assert [c.status for c in report.cases] == ["passed", "passed"], [c.message + c.diff for c in report.cases]


def test_a_mock_that_breaks_the_locked_output_schema_is_a_test_error(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: wrong output type
            mocks:
              fetch: {output: {value: "three"}}
              classify: {output: {value: 3}}
            expect: {status: completed}
          - name: undeclared outcome
            mocks:
              fetch: {output: {value: 3}}
              classify: {outcome: huge, output: {value: 3}}
            expect: {status: completed}
        """)
    assert [c.status for c in report.cases] == ["error", "error"]
    assert "step fetch" in report.cases[0].message and "output schema" in report.cases[0].message
    assert "huge" in report.cases[1].message


def test_an_unmocked_python_capability_is_refused(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: forgot a mock
            mocks:
              classify: {output: {value: 3}}
            expect: {status: completed}
        """)
    case = report.cases[0]
    assert case.status == "error"
    assert "step fetch calls nodes.fetch, which this case does not mock" in case.message


def test_real_refs_run_for_real(project: Path) -> None:
    report = run(project, """
        workflow: main
        cases:
          - name: classify runs for real
            mocks: {fetch: {output: {value: 11}}}
            real: [nodes.classify]
            expect: {outcome: big}
        """)
    assert report.cases[0].status == "passed", report.cases[0].message


def test_junit_xml_parses_and_counts(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_test(project, """
        workflow: ask
        cases:
          - name: approved
            interrupts: {approve: {outcome: "yes", payload: {by: ana}}}
            expect: {outcome: ok}
          - name: wrong
            expect: {status: completed}
          - name: broken answer
            interrupts: {approve: {outcome: maybe}}
        """)
    out = project / "report.xml"
    assert cli("test", "--project", str(project), "--format", "junit", "--output", str(out)) == 1
    suites = ET.parse(out).getroot()
    assert suites.tag == "testsuites"
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("3", "1", "1")
    cases = suites.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["approved", "wrong", "broken answer"]
    assert cases[1].find("failure") is not None and cases[2].find("error") is not None
    assert "FAIL" in capsys.readouterr().out


def test_cli_text_exit_codes_and_filter(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_test(project, """
        workflow: ask
        cases:
          - name: approved
            interrupts: {approve: {outcome: "yes", payload: {by: ana}}}
            expect: {outcome: ok}
          - name: wrong
            expect: {status: completed}
        """)
    assert cli("test", "--project", str(project), "-k", "approved") == 0
    assert "PASS  tests/t.wftest.yaml:3 approved" in capsys.readouterr().out
    assert cli("test", "--project", str(project)) == 1
    out = capsys.readouterr().out
    assert "FAIL  tests/t.wftest.yaml:6 wrong" in out and '-  "status": "completed"' in out
    assert "1 passed, 1 failed, 0 errors" in out
    assert cli("test", "--project", str(project), "--format", "nope") == 2
    assert cli("test", "--project", str(project), "-k", "nomatch") == 5  # as pytest: nothing selected
    assert "no case selected: -k matched none of the cases" in capsys.readouterr().out


def test_junit_totals_count_an_invalid_test_file(project: Path) -> None:
    add_test(project, """
        workflow: ask
        cases:
          - name: typo
            expcet: {outcome: ok}
        """)
    out = project / "report.xml"
    assert cli("test", "--project", str(project), "--format", "junit", "--output", str(out)) == 2
    suites = ET.parse(out).getroot()
    [suite] = suites.findall("testsuite")
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("1", "0", "1")


def test_github_annotations_at_the_case_line(project: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    add_test(project, """
        workflow: ask
        cases:
          - name: wrong
            expect: {status: completed}
        """)
    assert cli("test", "--format", "github") == 1
    assert "::error file=tests/t.wftest.yaml,line=3,col=11,title=wfops test failed%3A wrong::" in \
        capsys.readouterr().out


def test_invalid_test_files_exit_2_with_positions(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_test(project, """
        workflow: main
        cases:
          - name: typo
            mocks:
              fetsch: {output: {value: 1}}
              nodes.fetch: {outptu: {}}
        """)
    assert cli("test", "--project", str(project)) == 2
    out = capsys.readouterr().out
    assert "tests/t.wftest.yaml:6:" in out and "unknown-key" in out
    add_test(project, """
        workflow: main
        cases:
          - name: typo
            mocks:
              fetsch: {output: {value: 1}}
              std.nope: {output: {}}
            expect: {path: [fetch, nowhere]}
        """)
    report = wfops.Project(project).test()
    assert report.invalid and report.cases == []
    found = {(d.code, d.line) for d in report.diagnostics}
    assert found == {("unknown-test-step", 5), ("unknown-test-ref", 6), ("unknown-test-step", 7)}


def test_validate_checks_test_files_and_their_edits_miss_the_cache(project: Path) -> None:
    add_test(project, """
        workflow: main
        cases:
          - name: fine
            mocks: {fetch: {output: {value: 1}}}
        """)
    assert wfops.Project(project).validate().ok
    add_test(project, """
        workflow: main
        cases:
          - name: typo
            mocks: {fetsch: {output: {value: 1}}}
        """)
    report = wfops.Project(project).validate()
    assert [(d.code, d.file, d.line) for d in report.diagnostics] == [
        ("unknown-test-step", "tests/t.wftest.yaml", 4)]
    assert not wfops.Project(project).validate(["tests/t.wftest.yaml"]).ok
    assert wfops.Project(project).validate(["workflows/main.yaml"]).ok
    add_test(project, "workflow: nope\ncases: [{name: a}]\n")
    assert [d.code for d in wfops.Project(project).validate().diagnostics] == ["unknown-test-workflow"]


def test_a_mock_of_a_step_that_calls_nothing_is_reported(project: Path) -> None:
    add_test(project, """
        workflow: outer
        cases:
          - name: a subworkflow step is not a call
            mocks: {sub: {output: {}}}
        """)
    report = wfops.Project(project).test()
    assert [(d.code, d.line) for d in report.diagnostics] == [("unknown-test-step", 4)]
    assert "calls a capability" in report.diagnostics[0].message


def test_paths_choose_the_files_and_are_guarded(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_test(project, "workflow: ask\ncases: [{name: waits, expect: {status: interrupted}}]\n",
             name="elsewhere/ask.wftest.yaml")
    assert wfops.Project(project).test().cases == []  # default: tests/ only
    assert [c.name for c in wfops.Project(project).test(["elsewhere"]).cases] == ["waits"]
    assert cli("test", "--project", str(project), str(project / "workflows/main.yaml")) == 2
    assert "is not a workflow test file" in capsys.readouterr().err
    with pytest.raises(wfops.UsageError, match="outside the project"):
        wfops.Project(project).test(["../x.wftest.yaml"])


def test_schema_errors_are_reported_once_in_the_form_written(project: Path) -> None:
    add_test(project, """
        workflow: main
        cases:
          - name: typos
            mocks:
              fetch: {outptu: {}}
              classify: [{outcome: 3}]
              nodes.fetch: "text"
        """)
    report = wfops.Project(project).test()
    assert [(d.code, d.line) for d in report.diagnostics] == [
        ("unknown-key", 5), ("wrong-type", 6), ("wrong-type", 7)]


def test_no_test_files_is_said_and_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("test", "--project", str(project)) == 0
    assert "no workflow tests found" in capsys.readouterr().out
