"""What `run`, `resume` and `runs` used to get wrong: `--json` that printed nothing when
refused, node output on fd 1 in machine-read output, `runs rm` of unfinished runs, `runs
list` filters that said "no runs yet", Python reprs in messages, and nodes that ran in the
caller's directory instead of the project root."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env, run_cli
from wfops.api.runs import RUN_KEYS

OPS = '''
import os
import subprocess
import sys

from pydantic import BaseModel

import wfops

os.write(1, b"import-time bytes on fd 1\\n")


class Nothing(BaseModel):
    pass


class Text(BaseModel):
    text: str


@wfops.node
def read(payload: Nothing) -> Text:
    with open("data/note.txt", encoding="utf-8") as f:  # relative: the project root
        return Text(text=f.read().strip())


@wfops.node
def noisy(payload: Nothing) -> Text:
    os.write(1, b"raw bytes on fd 1\\n")
    subprocess.run([sys.executable, "-c", "print('a child process prints')"], check=True)
    return Text(text="quiet")


@wfops.node
def echo(payload: Text) -> Text:
    return payload
'''

FILES = {
    "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n",
    "ops.py": OPS,
    "data/note.txt": "from the root\n",
    "workflows/read.yaml": """
        name: read
        state: {text: {type: string}}
        output: {text: $state.text}
        steps:
          - {id: r, uses: ops.read, save: {text: state.text}, next: end}
    """,
    "workflows/noisy.yaml": """
        name: noisy
        output: {text: done}
        steps:
          - {id: n, uses: ops.noisy, next: end}
    """,
    "workflows/ask.yaml": """
        name: ask
        steps:
          - id: ask
            interrupt: approval
            resume_schema: {type: object, required: [by], properties: {by: {type: string}}}
            on: {approved: end}
    """,
    "workflows/typo.yaml": """
        name: typo
        input: {type: object, properties: {name: {type: string}}}
        steps:
          - {id: e, uses: ops.echo, with: {text: $input.nmae}, next: end}
    """,
    **{f"deployments/{name}.yaml": f"name: {name}\nworkflow: {name}\n" for name in ("read", "noisy", "ask", "typo")},
}


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write(tmp_path_factory.mktemp("gaps"), FILES)
    done = run_cli("compile", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def test_run_json_prints_one_object_when_refused(proj: Path, tmp_path: Path) -> None:
    done = run_cli("run", "nope", "--json", cwd=proj)
    assert done.returncode == 2
    shown = json.loads(done.stdout)
    assert shown["status"] == "refused" and shown["deployment"] == "nope" and shown["run_id"] is None
    assert "nope" in shown["error"]["message"] and "wfops: error:" in done.stderr
    elsewhere = run_cli("run", "read", "--json", cwd=tmp_path)  # no project: refused too
    assert elsewhere.returncode == 2 and json.loads(elsewhere.stdout)["error"]["type"] == "ProjectNotFound"
    unparsed = run_cli("run", "--json", "--bogus", cwd=proj)
    assert unparsed.returncode == 2 and json.loads(unparsed.stdout)["status"] == "refused"
    unknown = run_cli("resume", "no-such-run", "--json", cwd=proj)
    assert unknown.returncode == 1
    shown = json.loads(unknown.stdout)
    assert list(shown) == [*RUN_KEYS, "diagnostics"]  # the run object's keys, in its order
    assert shown | {"error": None} == {
        **dict.fromkeys(RUN_KEYS), "run_id": "no-such-run", "status": "error", "unlocked": False,
        "orphaned": False, "diagnostics": []}


def test_nodes_run_in_the_project_root_wherever_wfops_starts(proj: Path) -> None:
    done = run_cli("run", "read", "--json", cwd=proj / "data")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["output"] == {"text": "from the root"}


def test_runs_rm_refuses_an_unfinished_run_unless_forced(proj: Path) -> None:
    asked = run_cli("run", "ask", "--json", cwd=proj)
    assert asked.returncode == 3
    run_id = json.loads(asked.stdout)["run_id"]
    refused = run_cli("runs", "rm", run_id, cwd=proj)
    assert refused.returncode == 2 and "interrupted" in refused.stderr and "--force" in refused.stderr
    assert run_cli("runs", "show", run_id, cwd=proj).returncode == 0  # still there
    forced = run_cli("runs", "rm", run_id, "--force", cwd=proj)
    assert forced.returncode == 0 and run_cli("runs", "show", run_id, cwd=proj).returncode == 1
    finished = json.loads(run_cli("run", "read", "--json", cwd=proj).stdout)["run_id"]
    assert run_cli("runs", "rm", finished, cwd=proj).returncode == 0


def test_runs_list_filters_say_what_matched_nothing(proj: Path) -> None:
    assert run_cli("run", "read", cwd=proj).returncode == 0
    by_status = run_cli("runs", "list", "--status", "running", cwd=proj)
    assert by_status.returncode == 0 and by_status.stdout.strip() == "no `running` runs"
    never_ran = run_cli("runs", "list", "--deployment", "noisy", "--status", "failed", cwd=proj)
    assert never_ran.stdout.strip() == "no `failed` runs of deployment `noisy`"
    unknown = run_cli("runs", "list", "--deployment", "nope", cwd=proj)
    assert unknown.returncode == 2 and "unknown deployment 'nope'" in unknown.stderr
    assert "ask, noisy, read, typo" in unknown.stderr


def test_messages_show_values_as_json(proj: Path) -> None:
    asked = json.loads(run_cli("run", "ask", "--json", cwd=proj).stdout)["run_id"]
    done = run_cli("resume", asked, "--outcome", "approved", cwd=proj)  # --payload left out
    assert done.returncode == 2
    assert 'null is not of type "object"' in done.stdout + done.stderr
    assert "None" not in done.stdout + done.stderr


def test_a_mistyped_input_fails_the_run_saying_it_was_null(proj: Path) -> None:
    done = run_cli("run", "typo", "--json", "--input", "name=ana", cwd=proj)
    assert done.returncode == 1
    assert "got null" in json.loads(done.stdout)["error"]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("args", [["run", "noisy", "--json"], ["caps", "list", "--json"],
                                  ["validate", "--format", "json"], ["check", "--format", "sarif"]])
def test_node_output_on_fd_1_stays_off_stdout(proj: Path, args: list[str]) -> None:
    # The import's output is looked for: no record may spare the import (one command's record
    # of the sources' contracts serves the next).
    shutil.rmtree(proj / ".wfops" / "cache", ignore_errors=True)
    done = subprocess.run([*WFOPS, *args], cwd=proj, capture_output=True, text=True, env=process_env(), timeout=120)
    json.loads(done.stdout)  # one document, nothing else
    assert "import-time bytes on fd 1" in done.stderr
    if args[0] == "run":
        assert done.returncode == 0, done.stderr
        assert "raw bytes on fd 1" in done.stderr and "a child process prints" in done.stderr
