"""Workflow tests authored through MCP alone: zero cases is said, not passed off as green;
new_test scaffolds a file from the contracts; validate checks unsaved test text; write_file
and patch_workflow write tests/**/*.wftest.yaml, validated like other files; run_tests runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.projects import drive_tools, std_project

CASE = """\
workflow: hello
cases:
  - name: greets
    input: {who: ana}
    expect: {status: completed, output: {greeting: hello ana}}
"""


def drive(root: Path, script: Any) -> None:
    drive_tools(root, script)


def test_a_test_file_is_scaffolded_validated_written_patched_and_run(tmp_path: Path) -> None:
    root = std_project(tmp_path)

    async def script(call: Any) -> None:
        assert (await call("compile"))["ok"] is True
        none = await call("run_tests")
        assert none["ok"] is True and none["passed"] == 0 and none["cases"] == []
        assert "no test case was found under tests/" in none["notes"][0]
        offered = {a["tool"]: a["arguments"] for a in none["next_actions"]}
        assert offered["new_test"] in ({"workflow": "ask"}, {"workflow": "hello"})
        assert offered["write_file"]["path"] == "tests/NAME.wftest.yaml" and "cases:" in offered["write_file"]["text"]

        # new_test: a case per outcome, mocks and answers that fit the contracts; it runs green
        made = await call("new_test", workflow="ask", write=True)
        assert made["ok"] is True and made["written"] is True and made["path"] == "tests/ask.wftest.yaml"
        assert '"question": {"outcome": "approved", "payload": {"by": "<by>"}}' in made["text"]
        assert "question answers rejected" in made["text"]
        ran = await call("run_tests", **made["next_actions"][0]["arguments"])
        assert (ran["passed"], ran["failed"], ran["errors"]) == (2, 0, 0), ran["cases"]

        # validate: unsaved test text, checked against the project (a step the workflow lacks)
        bad = CASE.replace("input: {who: ana}", "input: {who: ana}\n    mocks: {nosuch: {output: {}}}")
        checked = await call("validate", text=bad, kind="wftest", path="tests/hello.wftest.yaml")
        assert checked["ok"] is False and checked["diagnostics"][0]["file"] == "tests/hello.wftest.yaml"
        assert "nosuch" in checked["diagnostics"][0]["message"]
        unsaved = await call("validate", text=CASE, kind="wftest")
        assert unsaved["ok"] is True  # and it is saved where its own workflow names it, text and all
        assert unsaved["next_actions"][0]["arguments"] == {"path": "tests/hello.wftest.yaml", "text": CASE}

        # write_file refuses the bad text with its diagnostics, writes the good one
        refused = await call("write_file", path="tests/hello.wftest.yaml", text=bad)
        assert refused["error"]["type"] == "WriteRefused" and not (root / "tests/hello.wftest.yaml").exists()
        wrote = await call("write_file", path="tests/sub/hello.wftest.yaml", text=CASE)
        assert wrote["written"] is True and wrote["next_actions"][0]["tool"] == "run_tests"
        passed = await call("run_tests", **wrote["next_actions"][0]["arguments"])
        assert (passed["passed"], passed["failed"]) == (1, 0)

        # patch_workflow edits a test file too: a wrong expectation fails with its diff
        patched = await call("patch_workflow", path="tests/sub/hello.wftest.yaml", patch=[
            {"op": "replace", "path": "/cases/0/expect/output/greeting", "value": "hello bob"}])
        assert patched["written"] is True
        failed = await call("run_tests", paths=["tests/sub"])
        assert failed["ok"] is False and failed["failed"] == 1 and "hello bob" in failed["cases"][0]["diff"]

        # still only test files under tests/, and never python
        outside = await call("write_file", path="elsewhere/x.wftest.yaml", text=CASE)
        assert outside["error"]["type"] == "UsageError"

    drive(root, script)
