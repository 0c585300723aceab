"""A python node's calls in a fan-out: the guards every call has (its own step log, prints
kept off stdout, the project root as working directory) are set up once for all the items,
and each call keeps every check (a wrong output is still the item's clear failure)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import wfops
from tests.conftest import write

NODES = '''
import os
import sys

from pydantic import BaseModel

import wfops
from wfops.sources import modules, steplogs

SEEN = []


class In(BaseModel):
    n: int


class Out(BaseModel):
    n: int


@wfops.node
async def look(payload: In) -> Out:
    # Calls in the fan-out's hold add no user to the guards: the hold is their only one.
    SEEN.append({"cwd": os.getcwd(), "users": (modules._stdout_users, modules._cwd_users, steplogs._users),
                 "stdout_is_stderr": sys.stdout is sys.stderr
                 or getattr(sys.stdout, "stream", None) is getattr(sys.stderr, "stream", 0)})
    print(f"item {payload.n} says hi")
    if payload.n == 2:
        return Out.model_construct(n="not a number")  # skips pydantic's checks: the contract's to catch
    return Out(n=payload.n)
'''

FAN = """
name: fan
input: {type: object, properties: {ns: {type: array}}}
state: {out: {type: array}, errs: {type: array}}
output: {out: $state.out, errs: $state.errs}
steps:
  - id: each
    foreach: $input.ns
    uses: py.look
    with: {n: $item}
    mode: {mode}
    concurrency: 4
    on_item_error: collect
    save: state.out
    errors: state.errs
    next: end
"""


@pytest.fixture
def project(tmp_path: Path) -> wfops.Project:
    files = {"sources.yaml": "sources:\n  py: {kind: python, module: fannodes}\n", "fannodes.py": NODES}
    for mode in ("parallel", "serial"):
        files[f"workflows/fan-{mode}.yaml"] = FAN.replace("name: fan", f"name: fan-{mode}").replace("{mode}", mode)
        files[f"deployments/fan-{mode}.yaml"] = f"name: fan-{mode}.local\nworkflow: fan-{mode}\n"
    root = write(tmp_path / "proj", files)
    with wfops.Project(root) as opened:
        assert opened.compile().written
        yield opened
    sys.modules.pop("fannodes", None)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the model_construct above
@pytest.mark.parametrize("mode", ["parallel", "serial"])
def test_a_fanouts_calls_share_one_setup_and_keep_their_checks(project: wfops.Project, mode: str) -> None:
    cwd, stdout = os.getcwd(), sys.stdout
    done = project.run(f"fan-{mode}.local", input={"ns": [0, 1, 2, 3, 4, 5]})
    assert os.getcwd() == cwd and sys.stdout is stdout  # all put back once the fan-out ends
    assert done.status == "completed", done.error
    assert done.output["out"] == [{"n": n} for n in (0, 1, 3, 4, 5)]
    (failed,) = done.output["errs"]
    assert failed["index"] == 2 and failed["type"] == "InvalidOutput"
    assert "py.look output does not match its output schema" in failed["message"]
    seen = sys.modules["fannodes"].SEEN
    assert len(seen) == 6
    assert all(s["cwd"] == str(project.root) and s["stdout_is_stderr"] for s in seen)
    assert all(s["users"] == (1, 1, 1) for s in seen)  # the hold only: each call sets up just its log
    logs = {log.step: log.text for log in project.step_logs(done.run_id)}
    assert logs == {f"each[{n}]": f"item {n} says hi\n" for n in range(6)}  # each call its own log
