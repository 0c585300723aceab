"""Acceptance: every step kind, operator, reducer and failure mode through `wfops run`,
as a user drives it (in process through tests/harness.py, a real project, a real store)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.runner.acceptance_project import make_acceptance_project
from tests.runner.helpers import as_json, env_for, read_log, spawn, wfops
from wfops.api.runs import RUN_KEYS

PUBLIC_KEYS = set(RUN_KEYS)
TRACE_KEYS = {"seq", "step", "kind", "attempt", "input", "outcome", "output", "state_changes", "next",
              "error", "started_at", "ended_at", "extra"}


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_acceptance_project(tmp_path_factory.mktemp("acceptance"))


def run(proj: Path, deployment: str, *args: str, code: int = 0, env: dict[str, str] | None = None) -> dict:
    done = wfops(proj, "run", deployment, "--json", *args, env=env)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    result = as_json(done)
    assert isinstance(result, dict) and set(result) == PUBLIC_KEYS
    return result


def trace(proj: Path, run_id: str) -> list[dict]:
    done = wfops(proj, "runs", "trace", run_id, "--json")
    assert done.returncode == 0, done.stderr
    entries = as_json(done)
    assert isinstance(entries, list)
    for entry in entries:
        assert set(entry) == TRACE_KEYS
    return entries


def test_calls_context_and_outcomes(proj: Path) -> None:
    result = run(proj, "calls")
    assert result["status"] == "completed" and result["outcome"] == "ok"
    assert result["error"] is None and result["interrupt"] is None
    assert result["output"]["n"] == 6
    ctx = result["output"]["ctx"]
    assert ctx["run_id"] == result["run_id"] and ctx["workflow"] == "calls"
    assert ctx["deployment"] == "calls" and ctx["step"] == "c" and ctx["attempt"] == 1
    assert ctx["idempotency_key"]
    entries = trace(proj, result["run_id"])
    assert [e["step"] for e in entries] == ["d1", "m", "c"]
    assert [e["seq"] for e in entries] == [1, 2, 3]
    assert entries[0]["input"] == {"n": 3} and entries[0]["output"] == {"n": 6}
    assert entries[0]["state_changes"] == [{"path": "state.n", "value": 6}]
    assert entries[0]["next"] == "m" and entries[-1]["next"] == "end"
    # a non-ok outcome without output routes on and saves nothing; an end step sets the outcome
    result = run(proj, "calls", "--input", "v=null")
    assert result["status"] == "completed" and result["outcome"] == "none"
    assert [e["kind"] for e in trace(proj, result["run_id"])] == ["call", "call", "end"]


def test_every_condition_operator(proj: Path) -> None:
    result = run(proj, "conds")
    assert result["output"]["hits"] == ["eq", "ne", "gt", "ge", "lt", "le", "in", "exists", "and", "or",
                                        "not", "$lit"]
    result = run(proj, "conds", "--input", "a=2", "--input", "b=1", "--input", "s=z", "--input", "flag=false")
    assert result["output"]["hits"] == ["ne", "ge", "le", "exists", "$lit"]
    entries = trace(proj, result["run_id"])
    assert {e["outcome"] for e in entries if e["kind"] == "condition"} <= {"then", "else"}


def test_every_reducer(proj: Path) -> None:
    result = run(proj, "red")
    assert result["output"] == {
        "r": 2, "ap": [[1], [2]], "ex": [1, 2, 3, 7], "un": [1, 2, 3, [1], 4],
        "me": {"a": 1, "b": {"y": 2}, "c": 3}, "ad": 3.5, "mi": 3, "ma": 9, "obj": {"k": "v", "k2": "w"}}


def test_a_reducer_rejecting_a_value_fails_the_step_in_json_terms(proj: Path) -> None:
    result = run(proj, "badred", code=1)
    assert result["status"] == "failed" and result["error"]["type"] == "SaveError"
    assert result["error"]["step"] == "two"
    assert "a string" in result["error"]["message"] and "str" not in result["error"]["message"].split()


def test_subworkflow_outcomes_and_catch(proj: Path) -> None:
    result = run(proj, "parent")
    assert result["output"] == {"c": {"n": 4}, "err": None, "how": "ok"}
    steps = [e["step"] for e in trace(proj, result["run_id"])]
    assert steps[:3] == ["sub/z", "sub/dbl", "sub"]
    result = run(proj, "parent", "--input", "n=0")
    assert result["outcome"] == "zero"
    result = run(proj, "parent", "--input", "n=-1")
    assert result["status"] == "completed" and result["outcome"] == "broken"
    assert result["output"]["err"] == {"type": "ValueError", "message": "negative: -1", "step": "sub/dbl"}


def test_foreach_modes_and_item_errors(proj: Path) -> None:
    result = run(proj, "loop")
    assert result["output"]["out"] == [2, 6]
    assert result["output"]["errs"] == [{"index": 1, "type": "ValueError", "message": "negative: -2"}]
    assert result["output"]["ext"] == [2, 6]
    assert result["output"]["subs"] == [{"n": None}, {"n": 2}, {"n": 4}]
    entries = trace(proj, result["run_id"])
    assert [e["step"] for e in entries if e["kind"] == "item"][:3] == ["collect[0]", "collect[1]", "collect[2]"]
    failed = run(proj, "loopfail", code=1)
    assert failed["error"]["step"] == "each" and failed["error"]["message"] == "item 1: negative: -2"


@pytest.mark.parametrize(("value", "shown"), [("5", "an integer"), ("null", "null")])
def test_foreach_over_a_non_list_names_the_json_type(proj: Path, value: str, shown: str) -> None:
    result = run(proj, "loopfail", "--input", f"nums={value}", code=1)
    assert result["error"]["type"] == "NotAList"
    assert result["error"]["message"].endswith(f"got {shown}")


def test_retry_then_success_keeps_the_idempotency_key(proj: Path, tmp_path: Path) -> None:
    counter = tmp_path / "c"
    result = run(proj, "retry", "--input", f"counter={json.dumps(str(counter))}")
    assert result["output"] == {"n": 2, "err": None, "n2": 1}
    log = read_log(Path(str(counter) + ".log"))
    assert [e["attempt"] for e in log] == [1, 2, 3]
    assert len({e["key"] for e in log}) == 1
    entries = trace(proj, result["run_id"])
    # The two failed attempts are kept, each with its error, before the one that succeeded.
    assert [(e["kind"], e["attempt"], e["error"] is None) for e in entries[:3]] == [
        ("retry", 1, False), ("retry", 2, False), ("call", 3, True)]


def test_retries_exhausted_go_to_catch(proj: Path, tmp_path: Path) -> None:
    counter = tmp_path / "c"
    result = run(proj, "retry", "--input", f"counter={json.dumps(str(counter))}", "--input", "fails=9")
    assert result["status"] == "completed"
    assert result["output"]["err"] == {"type": "RuntimeError", "message": "flaky failure 2", "step": "fl"}


def test_timeout_fails_the_run(proj: Path, tmp_path: Path) -> None:
    counter = tmp_path / "c"
    result = run(proj, "retry", "--input", f"counter={json.dumps(str(counter))}", "--input", "secs=5", code=1)
    assert result["error"]["type"] == "Timeout" and result["error"]["step"] == "sl"


# 1e400 is no JSON number: `--input secs=1e400` is refused before the run (test_input_values_are_strict_json)
@pytest.mark.parametrize("secs", ['"abc"', "-1", "null", "true"])
def test_std_sleep_refuses_bad_seconds_instead_of_hanging(proj: Path, secs: str) -> None:
    result = run(proj, "sleepy", "--input", f"secs={secs}", code=1)
    assert result["error"]["type"] == "CapabilityError"
    assert "None" not in result["error"]["message"] and "True" not in result["error"]["message"]


def test_interrupt_resume_and_its_refusals(proj: Path) -> None:
    env = env_for(TOK="s3cr3t-token")
    result = run(proj, "ask", code=3, env=env)
    assert result["status"] == "interrupted"
    interrupt = result["interrupt"]
    assert set(interrupt) == {"id", "step", "kind", "request"}
    assert interrupt["step"] == "q" and interrupt["kind"] == "approval"
    assert interrupt["request"] == {"change": "x", "token": "***"}
    rid = result["run_id"]
    for args in (["--outcome", "nope", "--payload", '{"by": "a"}'], ["--outcome", "approved", "--payload", "{}"],
                 ["--outcome", "approved", "--payload", "{bad"], []):
        done = wfops(proj, "resume", rid, *args, env=env)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("wfops: error: ") and "Traceback" not in done.stderr
    shown = as_json(wfops(proj, "runs", "show", rid, "--json"))
    assert {k: shown[k] for k in result} == result  # refusals changed nothing
    done = wfops(proj, "resume", rid, "--outcome", "approved", "--payload", '{"by": "ana"}', "--json", env=env)
    assert done.returncode == 0, done.stderr
    final = as_json(done)
    assert set(final) == PUBLIC_KEYS and final["run_id"] == rid
    assert final["status"] == "completed" and final["output"] == {"decision": {"by": "ana"}}
    again = wfops(proj, "resume", rid, "--outcome", "approved", "--payload", '{"by": "ana"}', env=env)
    assert again.returncode == 2 and "completed" in again.stderr


def test_interrupt_in_a_subworkflow_resumes_in_the_child(proj: Path) -> None:
    env = env_for(TOK="s3cr3t-token")
    result = run(proj, "outer", code=3, env=env)
    assert result["interrupt"]["step"] == "sub/q"
    done = wfops(proj, "resume", result["run_id"], "--outcome", "rejected", "--payload", '{"by": "b"}',
                 "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert as_json(done)["outcome"] == "nope"


def test_secrets_are_masked_everywhere(proj: Path) -> None:
    secret = "hunter2-very-secret"
    result = run(proj, "sec", code=1, env=env_for(TOK=secret))
    assert result["error"] == {"type": "CapabilityError", "message": "***", "step": "g"}
    entries = trace(proj, result["run_id"])
    text = json.dumps(entries)
    assert secret not in text
    assert entries[0]["input"] == {"value": "***"}
    assert entries[1]["state_changes"] == [{"path": "state.t", "value": "Bearer ***"}]
    for db in (proj / ".wfops").glob("wfops.db*"):
        assert secret.encode() not in db.read_bytes()


def test_missing_secret_refuses_the_run(proj: Path) -> None:
    done = wfops(proj, "run", "sec", "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["status"] == "refused"
    assert "TOK" in done.stderr and "Traceback" not in done.stderr


def test_bindings_defaults_and_self_resolution(proj: Path) -> None:
    assert run(proj, "hi.a")["output"] == {"text": "a:world", "opts": {"x": 1, "y": {"z": 2}}}
    assert run(proj, "hi.b")["output"]["text"] == "b:world"
    assert run(proj, "hi.self")["output"]["text"] == "self:me"  # no binding: the source of the same id
    # CLI input merges over the deployment defaults, key by key
    result = run(proj, "hi.a", "--input", "opts.y.w=3", "--input", "opts.x=[1]")
    assert result["output"]["opts"] == {"x": [1], "y": {"z": 2, "w": 3}}


def test_input_values_are_strict_json(proj: Path) -> None:
    # NaN / Infinity / 1e400 are not JSON numbers: refused with one line, before any run
    for value in ("NaN", "Infinity", "-Infinity", "1e400"):
        done = wfops(proj, "run", "calls", "--input", f"n={value}", "--json")
        assert done.returncode == 2, done.stdout + done.stderr
        assert repr(value) in done.stderr or f"'{value}'" in done.stderr


@pytest.mark.parametrize(("how", "caught"), [
    ("exit", {"type": "SystemExit", "message": "the capability called sys.exit(3); return or raise instead",
              "step": "sync"}),
    ("base", {"type": "Odd", "message": "odd base exception", "step": "sync"}),
])
def test_sys_exit_in_a_node_is_a_step_failure_not_wfops_exit_code(proj: Path, how: str, caught: dict) -> None:
    # Before: sys.exit(3) in a node ended wfops with exit 3 ("interrupted") and no output.
    result = run(proj, "quits", "--input", f"how={how}", code=1)
    assert result["output"] is None
    assert result["error"]["type"] == "SystemExit" and result["error"]["step"] == "last"
    entries = trace(proj, result["run_id"])
    items = [e for e in entries if e["kind"] == "item"]
    assert len(items) == 2 and all(e["error"]["type"] == "SystemExit" for e in items)
    sync = next(e for e in entries if e["step"] == "sync")
    assert sync["error"] == caught and sync["next"] == "last"


@pytest.mark.slow
def test_a_hung_sync_node_past_its_timeout_does_not_hang_wfops(proj: Path, tmp_path: Path) -> None:
    # Before: the run failed with Timeout after 0.3 s, but wfops printed nothing and exited
    # only when the node's thread finished (never, for a truly hung node).
    # A real process: the point is that it exits while the node's thread is still blocked
    # (the node sleeps an hour; the communicate timeout is only a hang guard).
    proc = spawn(proj, "run", "hung", "--json", "--input", "secs=3600")
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert done.returncode == 1, done.stderr
    result = as_json(done)
    assert result["error"]["type"] == "Timeout" and result["error"]["step"] == "b"
    shown = as_json(wfops(proj, "runs", "show", result["run_id"], "--json"))
    assert {k: shown[k] for k in result} == result
    assert run(proj, "hung")["status"] == "completed"  # a quick node is unaffected


def test_input_schema_defaults_fill_absent_keys(proj: Path) -> None:
    # Before: a documented `default` of the input schema was ignored and the run saw null.
    result = run(proj, "defaulted")
    assert result["output"] == {"n": 5, "k": None, "inner": {"greeting": "hello"}}
    result = run(proj, "defaulted", "--input", "n=7", "--input", "opts={}")
    assert result["output"] == {"n": 7, "k": "kk", "inner": {"greeting": "hello"}}


def test_state_fields_are_typed_at_run_time(proj: Path) -> None:
    # Before: a string saved into an integer state field (from an untyped output) was kept.
    result = run(proj, "typed")
    assert result["output"] == {"n": 1, "tags": ["a", "a"], "many": [1, 2], "obj": {"k": 3}, "loose": 1}
    for flag, step, field in (("n=abc", "n", "state.n"), ("tag=1", "t1", "state.tags"),
                              ("many=[1, \"x\"]", "m", "state.many"), ("k=x", "k", "state.obj")):
        failed = run(proj, "typed", "--input", flag, code=1)
        assert failed["error"]["type"] == "SaveError" and failed["error"]["step"] == step, failed["error"]
        assert failed["error"]["message"].startswith(f"{field} does not match its schema")
    assert run(proj, "typed", "--input", "n=null")["output"]["n"] is None  # null is "no value"
    assert run(proj, "typed", "--input", 'n="x"', code=1)["error"]["step"] == "n"
