"""A workflow's output keeps its declared key order on every run: the first (compiled
from the files), later ones (from the gate record), and a resumed one (from the store)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.loop_project import write_loop_project
from tests.harness import run_cli
from wfops.fastpath.output_order import with_declared_output

DECLARED = ["zed", "alpha", "mid"]


def test_output_keys_stay_in_declared_order(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1, compile_it=False)
    workflow = root / "workflows" / "loop.yaml"
    workflow.write_text(workflow.read_text().replace(
        "output:\n  done: $state.done\n",
        "output:\n  zed: $state.done\n  alpha: $input.items\n  mid: literal\n"))
    assert run_cli("compile", cwd=root).code == 0
    orders = [list(run_cli("run", "loop.local", "--json", cwd=root).json()["output"]) for _ in range(3)]
    assert orders == [DECLARED] * 3
    failed = run_cli("run", "loop.local", "--json", cwd=root, env={"LOOP_FAIL": "1"}).json()
    assert failed["status"] == "failed"
    resumed = run_cli("resume", failed["run_id"], "--json", cwd=root).json()
    assert resumed["status"] == "completed" and list(resumed["output"]) == DECLARED
    assert list(run_cli("runs", "show", "last", "--json", cwd=root).json()["output"]) == DECLARED


def test_an_order_that_does_not_fit_is_ignored() -> None:
    form = {"output": {"a": 1, "b": 2}}
    assert list(with_declared_output(form, ["b", "a"])["output"]) == ["b", "a"]
    assert with_declared_output(form, ["b", "c"]) is form
    assert with_declared_output(form, ["b"]) is form
    assert with_declared_output(form, None) is form
