"""`wfops test [PATHS...] [-k PATTERN] [--format text|json|junit|github] [--output FILE]`.

Runs the workflow tests (`tests/**/*.wftest.yaml` by default; PATHS are files or
folders relative to the current directory) offline with capabilities mocked. Exit 0
when every case passed, 1 when any failed or errored, 2 for usage errors and invalid
test files (their findings are printed like `wfops validate`'s), 5 when test files were
found but `-k` selected none of their cases (as pytest does). A project without test files
passes (it says so).
"""

from __future__ import annotations

import io
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from wfops.api import Project
from wfops.atomic import write_atomic
from wfops.errors import UsageError
from wfops.report import below_checkout, render
from wfops.report.github import escape_data, escape_property

if TYPE_CHECKING:
    from wfops.api import CaseResult, TestReport

FORMATS = ("text", "json", "junit", "github")
NO_CASES = 5  # pytest's "no tests collected": a CI job whose -k matches nothing should not pass
_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR"}


def run(*, paths: list[str], pattern: str | None, format: str, output: str | None, project: str | None,
        no_cache: bool = False) -> int:
    # `no_cache` is accepted so one CI line can pass `--no-cache` to run, resume and test
    # alike: a test never reads or writes the step cache (its mocks must never be served).
    del no_cache
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}", hint="use one of: " + ", ".join(FORMATS))
    found = Project(project)
    report = found.test(paths, pattern, base=Path.cwd())
    if format == "json":
        text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
    elif format == "junit":
        text = junit(report)
    else:
        text = plain(report, found.root, github=format == "github" or os.environ.get("GITHUB_ACTIONS") == "true")
    if output:
        write_atomic(Path(output), text, durable=False)
        if format != "text":
            sys.stdout.write(plain(report, found.root, github=False))
    else:
        sys.stdout.write(text)
    if report.invalid:
        return 2
    if report.files and not report.cases:
        return NO_CASES
    return 0 if report.ok else 1


def plain(report: TestReport, root: Path, *, github: bool) -> str:
    lines: list[str] = []
    if report.diagnostics:
        buffer = io.StringIO()
        render(report.diagnostics, "github" if github else "text", buffer, root)
        lines.append(buffer.getvalue().rstrip("\n"))
    for case in report.cases:
        lines.append(f"{_MARK[case.status]:5} {case.file}:{case.line} {case.name} ({case.duration * 1000:.1f} ms)")
        if case.status != "passed":
            lines.append(f"      {case.message}")
            lines.extend("      " + line for line in case.diff.splitlines())
            if github:
                lines.append(annotation(case, root))
    if not report.files and not report.diagnostics:
        lines.append("no workflow tests found (test files are named *.wftest.yaml; by default under tests/)")
    elif not report.cases and not report.invalid:
        lines.append("no case selected: -k matched none of the cases")
    if not report.invalid or report.cases:
        lines.append(f"{report.count('passed')} passed, {report.count('failed')} failed, "
                     f"{report.count('error')} errors in {report.duration:.2f}s")
    return "\n".join(lines) + "\n"


def annotation(case: CaseResult, root: Path) -> str:
    """A GitHub Actions `::error` command at the case's line of its test file."""
    prefix = below_checkout(root)
    file = f"{prefix}/{case.file}" if prefix else case.file
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in
                     (("file", file), ("line", case.line), ("col", case.column),
                      ("title", f"wfops test {case.status}: {case.name}")))
    message = case.message + (f"\n{case.diff}" if case.diff else "")
    return f"::error {props}::{escape_data(message)}"


def junit(report: TestReport) -> str:
    """JUnit XML: one <testsuite> per test file, one <testcase> per case; an invalid test file
    is a suite of one errored case. The <testsuites> totals are the sums of its suites."""
    suites = ET.Element("testsuites", name="wfops test", time=f"{report.duration:.3f}")
    by_file: dict[str, list[CaseResult]] = {}
    for case in report.cases:
        by_file.setdefault(case.file, []).append(case)
    for file, cases in by_file.items():
        suite = ET.SubElement(suites, "testsuite", name=file, tests=str(len(cases)),
                              failures=str(sum(c.status == "failed" for c in cases)),
                              errors=str(sum(c.status == "error" for c in cases)), skipped="0",
                              time=f"{sum(c.duration for c in cases):.3f}")
        for case in cases:
            item = ET.SubElement(suite, "testcase", name=case.name, classname=case.workflow, file=file,
                                 line=str(case.line), time=f"{case.duration:.3f}")
            if case.status == "failed":
                ET.SubElement(item, "failure", message=case.message, type="failed").text = case.diff
            elif case.status == "error":
                ET.SubElement(item, "error", message=case.message, type="error").text = case.message
    for d in report.diagnostics:  # an invalid file is an error of its own suite
        if not d.is_error:
            continue
        suite = ET.SubElement(suites, "testsuite", name=d.file, tests="1", failures="0", errors="1", skipped="0",
                              time="0.000")
        item = ET.SubElement(suite, "testcase", name=f"{d.file}:{d.line}:{d.column}", classname="wfops.validate",
                             file=d.file, line=str(d.line), time="0.000")
        ET.SubElement(item, "error", message=d.message, type=d.code).text = d.hint or ""
    for total in ("tests", "failures", "errors"):
        suites.set(total, str(sum(int(suite.get(total, "0")) for suite in suites)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
