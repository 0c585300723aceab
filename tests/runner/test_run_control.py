"""Run control through the CLI, in process: redrive a failed run, cancel a run nobody drives,
fork from a step, fold a foreach into reducers with `save_each`, the workflow `timeout`,
and `runs show` with the run's input and state."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from tests.runner.helpers import as_json, env_for, read_log, wfops
from tests.runner.runctl_project import make_runctl_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runctl_project(tmp_path_factory.mktemp("runctl"))


def test_a_failed_run_is_redriven_from_its_failed_step(project: Path, tmp_path: Path) -> None:
    log, healed = tmp_path / "effects.log", tmp_path / "healed"
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_HEALED=str(healed))
    failed = wfops(project, "run", "redrive.local", env=env)
    assert failed.returncode == 1, failed.stderr
    run_id = failed.stdout.split()[1]
    assert f"wfops resume {run_id}" in failed.stdout  # says how to redrive it

    healed.write_text("ok")  # the outage is over
    done = wfops(project, "resume", run_id, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert as_json(done)["status"] == "completed" and as_json(done)["output"] == {"n": 21}

    effects = read_log(log)
    assert Counter(e["step"] for e in effects) == {"first": 1, "outage": 3, "last": 1}  # committed steps ran once
    outage = [e for e in effects if e["step"] == "outage"]
    assert [e["attempt"] for e in outage] == [1, 2, 3]  # the redrive is attempt 3 ...
    assert len({e["key"] for e in outage}) == 1  # ... with the same idempotency key

    entries = as_json(wfops(project, "runs", "trace", run_id, "--json"))
    assert [(e["step"], e["kind"], e["attempt"], (e["error"] or {}).get("message")) for e in entries] == [
        ("first", "call", 1, None),
        ("outage", "retry", 1, "service unavailable"),  # every failed attempt, with its error
        ("outage", "call", 2, "service unavailable"),   # the failure that failed the run
        ("outage", "call", 3, None),
        ("last", "call", 1, None)]
    text = wfops(project, "runs", "trace", run_id).stdout
    assert "outage [retry] attempt 1 error RuntimeError: service unavailable" in text
    assert "outage [call] attempt 3 ok -> last" in text

    again = wfops(project, "resume", run_id)
    assert again.returncode == 2 and "completed" in again.stderr


def test_cancel_a_run_nobody_drives_then_resume_it(project: Path) -> None:
    waiting = as_json(wfops(project, "run", "waits.local", "--json"))
    run_id = waiting["run_id"]
    assert waiting["status"] == "interrupted"
    cancelled = wfops(project, "cancel", run_id)
    assert cancelled.returncode == 0 and f"run {run_id} cancelled" in cancelled.stdout
    assert f"wfops resume {run_id}" in cancelled.stdout
    shown = as_json(wfops(project, "runs", "show", run_id, "--json"))
    assert shown["status"] == "cancelled" and shown["interrupt"] is None
    listed = as_json(wfops(project, "runs", "list", "--status", "cancelled", "--json"))
    assert run_id in [r["run_id"] for r in listed]
    assert as_json(wfops(project, "cancel", run_id, "--json"))["status"] == "cancelled"  # idempotent

    back = wfops(project, "resume", run_id, "--json")  # a cancelled run resumes like a failed one
    assert back.returncode == 3 and as_json(back)["status"] == "interrupted"
    done = wfops(project, "resume", run_id, "--outcome", "go", "--payload", "{}", "--json")
    assert done.returncode == 0 and as_json(done)["output"] == {"n": 2}
    refused = wfops(project, "cancel", run_id)
    assert refused.returncode == 2 and "completed" in refused.stderr
    assert wfops(project, "cancel", "no-such-run").returncode == 1


def test_fork_with_a_changed_input_leaves_the_original_untouched(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "effects.log"
    env = env_for(WFOPS_TEST_LOG=str(log))
    original = as_json(wfops(project, "run", "forkme.local", "--json", env=env))
    assert (original["outcome"], original["output"]) == ("fast", {"n": 3, "mode": "fast"})
    before = as_json(wfops(project, "runs", "trace", original["run_id"], "--json"))

    forked = wfops(project, "runs", "fork", original["run_id"], "--from", "pick", "--input", "mode=slow",
                   "--json", env=env)
    assert forked.returncode == 0, forked.stderr
    fork = as_json(forked)
    assert fork["run_id"] != original["run_id"]
    assert (fork["outcome"], fork["output"]) == ("slow", {"n": 3, "mode": "slow"})  # state from before `pick`
    assert fork["forked_from"] == {"run_id": original["run_id"], "step": "pick"}
    assert [e["step"] for e in read_log(log)] == ["one", "two"]  # the fork ran no step twice

    assert as_json(wfops(project, "runs", "trace", original["run_id"], "--json")) == before
    shown = as_json(wfops(project, "runs", "show", original["run_id"], "--json"))
    assert (shown["outcome"], shown["forked_from"]) == ("fast", None)
    text = wfops(project, "runs", "show", fork["run_id"]).stdout
    assert f"forked     from run {original['run_id']} before step pick" in text
    assert 'input      {"start": 1, "mode": "slow"}' in text and 'state      {"n": 3}' in text

    # From an earlier step the new input reaches the steps that read it.
    early = as_json(wfops(project, "runs", "fork", original["run_id"], "--from", "one", "--input", "start=10",
                          "--json"))
    assert (early["outcome"], early["output"]) == ("fast", {"n": 12, "mode": "fast"})


@pytest.mark.parametrize(("args", "message"), [
    (("--from", "nowhere"), "has no step 'nowhere'"),
    (("--from", "slow"), "never reached step 'slow'"),
    (("--from", "pick", "--input", "mode=sideways"), "invalid input for the fork"),
])
def test_fork_refusals(project: Path, args: tuple[str, ...], message: str) -> None:
    original = as_json(wfops(project, "run", "forkme.local", "--json"))
    done = wfops(project, "runs", "fork", original["run_id"], *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_save_each_folds_a_fan_out_through_reducers_in_item_order(project: Path) -> None:
    done = as_json(wfops(project, "run", "summing.local", "--json"))
    assert done["status"] == "completed", done
    assert done["output"]["total"] == 20  # 2 + 4 + 6 + 8 through `add`
    assert done["output"]["order"] == [2, 3, 4, 5]  # `append`, in item order
    assert done["output"]["all"] == [{"n": 2}, {"n": 4}, {"n": 6}, {"n": 8}]
    entries = as_json(wfops(project, "runs", "trace", done["run_id"], "--json"))
    writes = [c["value"] for e in entries if e["step"].startswith("fan[") for c in e["state_changes"]]
    assert sorted(writes) == [2, 4, 6, 8]  # committed with the items, one write each
    shown = as_json(wfops(project, "runs", "show", done["run_id"], "--json"))
    assert shown["state"]["total"] == 20 and shown["input"] == {"xs": [1, 2, 3, 4]}


def test_saving_a_foreach_list_into_a_number_points_to_save_each(make_project) -> None:
    root = make_runctl_project(Path(make_project({})))
    (root / "workflows" / "summing.yaml").write_text(
        (root / "workflows" / "summing.yaml").read_text().replace("save_each: {n: state.total}\n    save: state.all",
                                                                  "save: {n: state.total}"))
    done = wfops(root, "validate")
    assert done.returncode == 1
    assert "foreach step `fan` saves the list of its item results" in done.stdout
    assert "use `save_each:` instead of `save:` on step `fan`" in done.stdout


def test_the_workflow_timeout_fails_the_run(project: Path) -> None:
    done = wfops(project, "run", "timed.local", "--input", "s=5", "--json")
    assert done.returncode == 1, done.stderr
    error = as_json(done)["error"]
    assert error["type"] == "Timeout" and "timed out after 0.5s" in error["message"]
    shown = as_json(wfops(project, "runs", "show", as_json(done)["run_id"], "--json"))
    assert shown["state"] == {"n": 2}  # the step before the timeout stays committed
    assert wfops(project, "run", "timed.local", "--input", "s=0").returncode == 0


def test_time_waiting_at_an_interrupt_does_not_count(project: Path) -> None:
    waiting = as_json(wfops(project, "run", "waits.local", "--json"))
    time.sleep(0.8)  # longer than the workflow's 0.5 s timeout
    done = wfops(project, "resume", waiting["run_id"], "--outcome", "go", "--payload", "{}", "--json")
    assert done.returncode == 0 and as_json(done)["status"] == "completed", done.stdout


def test_parallel_branches_overlap_and_join_in_branch_name_order(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "effects.log"
    (tmp_path / "release").write_text("go")
    env = env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_DIR=str(tmp_path))
    done = wfops(project, "run", "par.local", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    # Branch a waited at a gate that only branch b's last step opens: they overlapped, and b
    # finished first; the join still applies a's writes before b's.
    events = [(e["event"], e["tag"]) for e in read_log(log)]
    assert events.index(("start", "b1")) < events.index(("end", "a1"))
    assert events.index(("end", "b2")) < events.index(("end", "a1"))
    assert as_json(done)["output"] == {"tags": ["a1", "b1", "b2"], "last": "a2"}
    entries = as_json(wfops(project, "runs", "trace", as_json(done)["run_id"], "--json"))
    assert entries[-1]["step"] == "both" and entries[-1]["kind"] == "parallel"
    assert [c["value"] for c in entries[-1]["state_changes"]] == ["a1", "a2", "b1", "b2"]
    assert sorted(e["step"] for e in entries[:-1]) == ["both/a/meet", "both/a/slow", "both/b/last", "both/b/meet"]
    graph = wfops(project, "graph", "par").stdout
    assert 'subgraph' in graph and '"branch a"' in graph and '"branch b"' in graph and '"join"' in graph


def test_a_route_out_of_a_branch_is_reported(make_project) -> None:
    root = make_runctl_project(Path(make_project({})))
    path = root / "workflows" / "par.yaml"
    path.write_text(path.read_text().replace("save: {tag: state.last}, next: end", "save: {tag: state.last}, next: both"))
    done = wfops(root, "validate")
    assert done.returncode == 1
    assert "routes outcome `ok` to `both`, which is not a step of parallel branch `a`" in done.stdout


@pytest.mark.parametrize(("branch", "message"), [
    ("a: [{id: x, uses: ops.tick, with: {n: 1}, nxt: end}]", "unknown key `nxt` in `parallel.a[0]` of step `p`"),
    ("a: []", "branch `a` has no steps"),
])
def test_a_malformed_branch_is_named(make_project, branch: str, message: str) -> None:
    root = make_project({"workflows/w.yaml": f"name: w\nsteps:\n  - id: p\n    parallel: {{{branch}}}\n"
                                              "    next: end\n"})
    done = wfops(root, "validate")
    assert done.returncode == 1 and message in done.stdout, done.stdout


def test_workflow_tests_mock_parallel_branch_steps(make_project) -> None:
    root = make_runctl_project(Path(make_project({})), {"tests/par.wftest.yaml": """
workflow: par
cases:
  - name: joined in branch-name order
    mocks:
      both/a/meet: {output: {tag: x}}
      slow: {output: {tag: y}}
      ops.gate: {output: {tag: z}}
    expect:
      status: completed
      output: {tags: [x, z, z], last: y}
"""})
    done = wfops(root, "test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_branch_steps_get_every_static_check(make_project) -> None:
    root = make_project({"workflows/w.yaml": """
        name: w
        state: {n: {type: integer}}
        steps:
          - id: p
            parallel:
              a: [{id: x, workflow: nosuch, next: end}]
              b: [{id: y, uses: std.nosuch, next: end}]
              c: [{id: z, uses: std.echo, with: {value: $state.nope}, save: {value: state.n}, next: end}]
            next: end
        """})
    done = wfops(root, "validate")
    assert done.returncode == 1
    for message in ("step `x` calls workflow `nosuch`, which does not exist", "no capability `nosuch`",
                    "`$state.nope` reads state field `nope`"):
        assert message in done.stdout, done.stdout
