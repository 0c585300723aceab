"""`kind: command` sources: real programs run by a workflow, its contract pinned in the lock."""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import write
from tests.harness import finishes, run_cli
from tests.mcp.helpers import wait_dead
from wfops.api import Project
from wfops.errors import CallFailed
from wfops.fastpath import snapshot
from wfops.mcpserver.app import build_server

ARGV = textwrap.dedent("""\
    import json, os, sys
    print(json.dumps({"args": sys.argv[1:], "key": os.environ["WFOPS_IDEMPOTENCY_KEY"]}))
    """)
WC = textwrap.dedent("""\
    import json, sys
    words = sys.argv[1].split()
    if not words:
        print("nothing to count", file=sys.stderr)
        sys.exit(3)
    if words[0] == "boom":
        for n in range(8):
            print(f"trace line {n}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"words": len(words)}))
    """)
SPAWNS = textwrap.dedent("""\
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[1], "w").write(str(child.pid))
    time.sleep(600)
    """)
SOURCES = """\
sources:
  scripts:
    kind: command
    timeout: 30
    capabilities:
      argv:
        argv: [python, scripts/argv.py, "{text}", "--n={n}"]
        input: {type: object, required: [text, n], properties: {text: {type: string}, n: {type: integer}}}
        stdout: json
      wordcount:
        description: Count the words of a text.
        argv: [python, scripts/wc.py, "{text}"]
        input: {type: object, required: [text], properties: {text: {type: string}}}
        output: {type: object, required: [words], properties: {words: {type: integer}}}
        stdout: json
        outcomes: {0: ok, 3: empty}
      spawns:
        argv: [python, scripts/spawns.py, "{pidfile}"]
        input: {type: object, required: [pidfile], properties: {pidfile: {type: string}}}
        timeout: 1
      lines:
        argv: [python, -c, "print('{\\"a\\": 1}'); print('{\\"a\\": 2}')"]
        stdout: jsonl
"""
WORKFLOW = """\
name: count
version: 1
input: {type: object, required: [text], properties: {text: {type: string}}}
state:
  words: {type: integer}
output: {words: $state.words}
steps:
  - id: wc
    uses: scripts.wordcount
    with: {text: $input.text}
    save: {words: state.words}
    on: {ok: end, empty: none}
  - id: none
    uses: std.echo
    with: {value: 0}
    save: {value: state.words}
    next: end
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = write(tmp_path / "p", {"sources.yaml": SOURCES, "workflows/count.yaml": WORKFLOW,
                                  "deployments/count.local.yaml": "name: count.local\nworkflow: count\n"
                                                                  "input: {text: one two three}\n",
                                  "scripts/argv.py": ARGV, "scripts/wc.py": WC, "scripts/spawns.py": SPAWNS})
    made = Project(root, db=tmp_path / "runs.db")
    compiled = made.compile()
    assert compiled.ok, compiled.diagnostics
    return made


@pytest.mark.slow  # runs programs
def test_json_stdout_and_an_exit_code_routed_as_an_outcome(project: Project) -> None:
    run = project.run("count.local")
    assert (run.status, run.output) == ("completed", {"words": 3})
    empty = project.run("count.local", {"text": "   "})
    assert (empty.status, empty.output) == ("completed", {"words": 0})
    assert [e.step for e in project.trace(empty.run_id)] == ["wc", "none"]
    assert project.trace(empty.run_id)[0].outcome == "empty"


@pytest.mark.slow
def test_an_argument_with_spaces_and_quotes_is_one_argument_and_no_shell_reads_it(project: Project) -> None:
    text = """it's "quoted"  and $(touch pwned) ; `rm -rf x` * """
    out = project.call("scripts.argv", {"text": text, "n": 4}).output
    assert out is not None and out["args"] == [text, "--n=4"]
    assert out["key"]  # the step's idempotency key reaches the program
    assert not (project.root / "pwned").exists()


@pytest.mark.slow
def test_jsonl_stdout_is_a_list_of_items(project: Project) -> None:
    assert project.call("scripts.lines", {}).output == {"items": [{"a": 1}, {"a": 2}]}


@pytest.mark.slow
def test_an_undeclared_exit_code_fails_with_the_last_lines_of_stderr(project: Project) -> None:
    with pytest.raises(CallFailed) as caught:
        project.call("scripts.wordcount", {"text": "boom now"})
    message = caught.value.message
    assert "exited with status 2" in message and "trace line 7" in message and "trace line 3" in message
    assert "trace line 2" not in message  # only the last five lines


@pytest.mark.slow
def test_a_timeout_kills_the_whole_process_group(project: Project, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    with pytest.raises(CallFailed) as caught:
        # The hang guard: a child left holding the pipes would keep the call open.
        finishes(lambda: project.call("scripts.spawns", {"pidfile": str(pidfile)}), guard=60)
    assert caught.value.error["type"] == "Timeout", caught.value.error
    assert "process group was killed" in caught.value.message
    child = int(pidfile.read_text())
    assert wait_dead(child), f"the program's child {child} outlived the timeout"


@pytest.mark.slow
def test_a_changed_script_is_drift_and_the_run_is_refused(project: Project) -> None:
    assert project.check().ok
    script = project.root / "scripts" / "wc.py"
    script.write_text(script.read_text() + "# a change\n")
    found = [d for d in project.check().diagnostics if d.code == "capability-drift"]
    assert len(found) == 1 and "scripts.wordcount changed" in found[0].message, found
    assert "`scripts/wc.py` changed (sha256" in found[0].message
    lock = json.loads((project.root / "wfops.lock").read_text())
    pins = lock["sources"]["scripts"]["capabilities"]["wordcount"]["pins"]
    assert pins["executable"] == "python" and set(pins) == {"executable", "sha256:scripts/wc.py"}


def test_shell_true_is_warned_and_a_shell_string_refused(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": textwrap.dedent("""\
        sources:
          sh:
            kind: command
            capabilities:
              greet: {argv: ["echo hello {name}"], shell: true}
        """)})
    [found] = Project(root).validate().diagnostics
    assert (found.code, found.severity, found.line) == ("command-shell", "warning", 5), found
    write(root, {"sources.yaml": textwrap.dedent("""\
        sources:
          bad:
            kind: command
            capabilities:
              greet: {argv: "echo hello"}
        """)})
    [found] = Project(root).validate().diagnostics
    assert (found.code, found.line) == ("shell-command", 5) and "`argv` must be a list" in found.message


@pytest.mark.slow
def test_shell_true_quotes_each_value(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": textwrap.dedent("""\
        sources:
          sh:
            kind: command
            capabilities:
              greet: {argv: ["printf '%s|' {name}"], shell: true, input: {type: object, properties: {name: {type: string}}}}
        """)})
    assert Project(root).call("sh.greet", {"name": "a b; touch pwned"}).output == {"text": "a b; touch pwned|"}
    assert not (root / "pwned").exists()


def test_an_unset_env_reference_fails_the_call_before_the_program_starts(tmp_path: Path) -> None:
    """`env:` values name variables; an unset one is a clear failure, not an empty token."""
    root = write(tmp_path, {"sources.yaml": textwrap.dedent("""\
        sources:
          sh:
            kind: command
            env: {TOKEN: "${WFOPS_TEST_UNSET_TOKEN}"}
            capabilities:
              greet: {argv: [python, -c, "print(1)"]}
        """)})
    os.environ.pop("WFOPS_TEST_UNSET_TOKEN", None)
    with pytest.raises(CallFailed) as caught:
        Project(root).call("sh.greet", {})
    assert "needs the environment variable WFOPS_TEST_UNSET_TOKEN" in caught.value.message


def test_an_edited_script_misses_the_validate_replay(tmp_path: Path) -> None:
    """The check of the lock reads the script's hash: a replayed validate must not hide it."""
    root = write(tmp_path, {"sources.yaml": SOURCES, "workflows/count.yaml": WORKFLOW, "scripts/wc.py": WC,
                            "scripts/argv.py": ARGV, "scripts/spawns.py": SPAWNS})
    assert run_cli("compile", cwd=root).code == 0
    assert run_cli("validate", cwd=root).code == 0
    (root / "scripts" / "wc.py").write_text(WC + "# edited\n")
    assert run_cli("check", cwd=root).code == 1
    names = snapshot.python_inputs(root)
    assert "scripts/wc.py" in names


@pytest.mark.slow  # runs a program
def test_an_mcp_client_describes_and_calls_a_command_capability(project: Project) -> None:
    """The MCP face renders the same capability (in-process, over the SDK's memory transport)."""
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(build_server(project)) as client:
            described = await client.call_tool("describe_capability", {"ref": "scripts.wordcount"})
            called = await client.call_tool("call_capability", {"ref": "scripts.wordcount",
                                                                "input": {"text": "a b c d"}})
            assert described.structured_content is not None and called.structured_content is not None
            return described.structured_content, called.structured_content

    described, called = asyncio.run(main())
    assert described["capability"]["outcomes"] == ["ok", "empty"]
    assert described["capability"]["input_schema"]["required"] == ["text"]
    assert called["error"] is None and called["output"] == {"words": 4}, called
