"""Acceptance, from the outside: MCP sources driven through the `wfops` CLI as a user would
(drift at run time, `--live`), with a server whose contract the test changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import mcpfork
from tests.conftest import write
from tests.harness import run_cli as wfops

# A server whose `add` tool gains a required input when variant.txt says "b"; it can also
# print a banner on stdout before serving (a common mistake of hand-written servers).
SERVER = mcpfork.preamble() + '''
import os
from pathlib import Path
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

app = MCPServer("acceptance")
VARIANT = Path("variant.txt").read_text().strip()


class Out(TypedDict):
    n: int
    pid: int
    cwd: str
    env: str


if VARIANT == "b":
    @app.tool()
    def add(a: int, b: int, c: int) -> Out:
        """Add three ints."""
        return {"n": a + b + c, "pid": os.getpid(), "cwd": os.getcwd(), "env": os.environ.get("QA_X", "")}
else:
    @app.tool()
    def add(a: int, b: int) -> Out:
        """Add two ints."""
        return {"n": a + b, "pid": os.getpid(), "cwd": os.getcwd(), "env": os.environ.get("QA_X", "")}

if Path("banner.txt").exists():
    print(Path("banner.txt").read_text().strip(), flush=True)
app.run()
'''

SUM = """
name: sum
state: {r: {type: object}, r2: {type: object}}
output: {r: $state.r, r2: $state.r2}
steps:
  - {id: one, uses: m.add, with: {a: 2, b: 3}, save: state.r, next: two}
  - {id: two, uses: m.add, with: {a: 1, b: 1}, save: state.r2, next: end}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("acceptance-mcp")
    write(root, {
        "tools/srv.py": SERVER,
        "tools/variant.txt": "a\n",
        "sources.yaml": """
            sources:
              calc:
                kind: mcp
                command: [python, srv.py]
                cwd: tools
                env: {QA_X: from-sources-yaml}
            """,
        "workflows/sum.yaml": SUM,
        "deployments/fail.yaml": "name: sum.fail\nworkflow: sum\nbindings: {m: calc}\ndrift: fail\n",
        "deployments/warn.yaml": "name: sum.warn\nworkflow: sum\nbindings: {m: calc}\ndrift: warn\n",
    })
    compiled = wfops("compile", cwd=root)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return root


@pytest.fixture
def variant(project: Path):
    def set_variant(value: str) -> None:
        (project / "tools/variant.txt").write_text(value + "\n")

    yield set_variant
    set_variant("a")
    (project / "tools/banner.txt").unlink(missing_ok=True)


@pytest.mark.slow  # starts its own MCP server process(es)
def test_one_session_with_argv_cwd_and_env_serves_the_whole_run(project: Path) -> None:
    proc = wfops("run", "sum.fail", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["output"]
    assert out["r"]["n"] == 5 and out["r2"]["n"] == 2
    assert out["r"]["pid"] == out["r2"]["pid"]  # one server process for both steps
    assert Path(out["r"]["cwd"]) == (project / "tools").resolve()
    assert out["r"]["env"] == "from-sources-yaml"


@pytest.mark.slow  # starts its own MCP server process(es)
def test_drift_fail_refuses_with_exit_2_and_points_at_check_live(project: Path, variant) -> None:
    variant("b")
    proc = wfops("run", "sum.fail", cwd=project)
    assert proc.returncode == 2
    assert "error[capability-drift]" in proc.stderr and "input field `c` added" in proc.stderr
    # plain `wfops check` reads MCP contracts from the lock: the advice must name --live
    assert "`wfops check --live`" in proc.stderr
    assert "Traceback" not in proc.stderr
    live = wfops("check", "--live", "--format", "json", cwd=project)
    assert live.returncode == 1
    assert "capability-drift" in {d["code"] for d in json.loads(live.stdout)["diagnostics"]}
    assert wfops("check", cwd=project).returncode == 0  # without --live no server is contacted


@pytest.mark.slow  # starts its own MCP server process(es)
def test_drift_warn_runs_and_warns(project: Path, variant) -> None:
    variant("b")
    proc = wfops("run", "sum.warn", "--json", cwd=project)
    assert "warning[capability-drift]" in proc.stderr
    run = json.loads(proc.stdout)
    # the run went on; the changed tool then rejects the old arguments: a step failure
    assert run["status"] == "failed" and proc.returncode == 1
    assert run["error"]["step"] == "one" and "mcp tool calc.add failed" in run["error"]["message"]


@pytest.mark.slow  # starts its own MCP server process(es)
def test_a_banner_on_the_servers_stdout_is_one_line_not_a_traceback(project: Path, variant) -> None:
    (project / "tools/banner.txt").write_text("starting acceptance server v1\n")
    proc = wfops("run", "sum.fail", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "ValidationError" not in proc.stderr
    warning = [line for line in proc.stderr.splitlines() if "not JSON-RPC" in line]
    assert len(warning) == 1 and "starting acceptance server v1" in warning[0]


def test_a_server_that_only_writes_garbage_is_refused_cleanly(tmp_path: Path) -> None:
    write(tmp_path, {
        "sources.yaml": """
            sources:
              bad: {kind: mcp, command: [python, -c, "print('hello'); print(42)"]}
            """,
        "workflows/w.yaml": "name: w\nsteps:\n  - {id: a, uses: bad.x, next: end}\n",
        "deployments/w.yaml": "name: w.local\nworkflow: w\n",
    })
    for args, code in ((("compile",), 1), (("check", "--live"), 1)):
        proc = wfops(*args, cwd=tmp_path)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout
        assert "mcp source 'bad'" in proc.stderr + proc.stdout


@pytest.mark.slow  # starts its own MCP server process(es)
def test_env_values_can_come_from_wfops_environment(project: Path) -> None:
    sources = project / "sources.yaml"
    original = sources.read_text()
    sources.write_text(original.replace("env: {QA_X: from-sources-yaml}",
                                        'env: {QA_X: "${QA_TOKEN}/${QA_REGION:-eu}/$${literal}"}'))
    try:
        unset = wfops("run", "sum.fail", cwd=project)
        assert unset.returncode == 2
        assert "`env.QA_X` needs the environment variable QA_TOKEN, which is not set" in unset.stderr
        assert "export QA_TOKEN=" in unset.stderr and "Traceback" not in unset.stderr

        given = wfops("run", "sum.fail", "--json", cwd=project, env={"QA_TOKEN": "t0k"})
        assert given.returncode == 0, given.stderr
        # a value read through `${NAME}` is treated as a secret: masked wherever it would be shown
        assert json.loads(given.stdout)["output"]["r"]["env"] == "***/eu/${literal}"
        assert wfops("check", cwd=project).returncode == 0  # env is not part of any contract
    finally:
        sources.write_text(original)


WAIT = """
name: wait
state: {r: {type: object}}
output: {r: $state.r}
steps:
  - {id: ask, interrupt: approval, request: {q: "go?"}, on: {go: add}}
  - {id: add, uses: m.add, with: {a: 1, b: 2}, save: state.r, next: end}
"""


@pytest.mark.slow  # starts its own MCP server process(es)
def test_resume_applies_the_drift_policy_to_the_servers_it_reopens(project: Path, variant) -> None:
    write(project, {"workflows/wait.yaml": WAIT,
                    "deployments/wait-fail.yaml": "name: wait.fail\nworkflow: wait\nbindings: {m: calc}\n",
                    "deployments/wait-warn.yaml": "name: wait.warn\nworkflow: wait\nbindings: {m: calc}\n"
                                                  "drift: warn\n"})
    try:
        assert wfops("compile", cwd=project).returncode == 0
        waiting = {}
        for name in ("wait.fail", "wait.warn"):
            proc = wfops("run", name, "--json", cwd=project)
            assert proc.returncode == 3, proc.stderr
            waiting[name] = json.loads(proc.stdout)["run_id"]
        variant("b")
        refused = wfops("resume", waiting["wait.fail"], "--outcome", "go", cwd=project)
        assert refused.returncode == 2, refused.stderr
        assert "error[capability-drift]" in refused.stderr and "input field `c` added" in refused.stderr
        warned = wfops("resume", waiting["wait.warn"], "--outcome", "go", cwd=project)
        assert "warning[capability-drift]" in warned.stderr and warned.returncode == 1  # went on, then failed
        variant("a")
        shown = json.loads(wfops("runs", "show", waiting["wait.fail"], "--json", cwd=project).stdout)
        assert shown["status"] == "interrupted"  # the refusal consumed nothing
        done = wfops("resume", waiting["wait.fail"], "--outcome", "go", "--json", cwd=project)
        assert done.returncode == 0 and json.loads(done.stdout)["output"]["r"]["n"] == 3
    finally:
        for rel in ("workflows/wait.yaml", "deployments/wait-fail.yaml", "deployments/wait-warn.yaml"):
            (project / rel).unlink()
        assert wfops("compile", cwd=project).returncode == 0


def test_sources_that_could_never_start_are_validate_errors(tmp_path: Path) -> None:
    write(tmp_path, {"sources.yaml": """
        sources:
          a:
            kind: mcp
            command: [python, srv.py]
            env: {"A=B": x, OK_1: y}
          b: {kind: mcp, command: ["", srv.py]}
          c: {kind: mcp, command: "python srv.py"}
        """})
    proc = wfops("validate", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    found = {(d["code"], d["line"], d["column"]): d["message"] for d in json.loads(proc.stdout)["diagnostics"]}
    assert "not a valid environment variable name" in found[("invalid-value", 5, 11)]
    assert "`command[0]` of source `b`" in found[("invalid-value", 6, 28)]
    assert ("shell-command", 7, 27) in found
