"""Values that are legal YAML or JSON but hostile, past the loader, through the CLI: each is
refused where it enters (a diagnostic, a usage error, a step failure), never an internal
error, never a run left `running`, never a secret in a message. After each test the store
holds only valid JSON (tests/runner/hostile.py checks it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.harness import finishes
from tests.runner.helpers import env_for, wfops
from tests.runner.hostile import (
    EVIL_TEXT,
    PEM,
    assert_no_secret,
    assert_store_sound,
    make_hostile_project,
)

NO_CRASH = ("Traceback", "internal error")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_hostile_project(tmp_path_factory.mktemp("hostile"))
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def run(project: Path, db: Path, *args: str, env: dict[str, str | None] | None = None):
    done = wfops(project, *args, "--db", str(db), env=env)
    assert not any(text in done.stderr for text in NO_CRASH), done.stderr
    return done


# -- numbers ---------------------------------------------------------------------------

def test_integers_too_long_to_print_are_refused_where_they_enter(project: Path, db: Path, tmp_path: Path) -> None:
    hex_literal = "0x" + "f" * 3998  # 4,000 characters, but more than 4,300 decimal digits
    done = run(project, db, "run", "add.local", "--input", "a=" + "9" * 4001)
    assert done.returncode == 2 and "--input a: an integer of 4001 digits is too long" in done.stderr
    file = tmp_path / "input.yaml"
    file.write_text(f"a: {hex_literal}\n")
    done = run(project, db, "run", "add.local", "--input-file", str(file))
    assert done.returncode == 2 and "integer of more than 4000 decimal digits" in done.stderr
    deployment = project / "deployments" / "big.yaml"
    deployment.write_text(f"name: big.local\nworkflow: add\ninput: {{a: {hex_literal}}}\n")
    try:
        done = wfops(project, "validate")
        assert done.returncode == 1 and "error[yaml-invalid-number]" in done.stdout
    finally:
        deployment.unlink()
    done = run(project, db, "resume", "no-such-run", "--outcome", "ok", "--payload", "9" * 5000)
    assert done.returncode == 2 and "--payload: an integer of 5000 digits is too long" in done.stderr
    assert not db.exists() or assert_store_sound(db) == []


@pytest.mark.parametrize(("a", "b", "why"), [
    ("1.7e308", "1.7e308", "add overflows: inf is not a JSON number"),
    ("9" * 400, "1.5", "add overflows: the result is too large for a JSON number"),
    ("9" * 4000, "9" * 4000, "add overflows: an integer of more than 4000 digits is too long"),
])
def test_a_reducer_that_overflows_fails_its_step(project: Path, db: Path, a: str, b: str, why: str) -> None:
    done = run(project, db, "run", "add.local", "--input", f"a={a}", "--input", f"b={b}", "--json")
    assert done.returncode == 1
    error = done.json()["error"]
    assert (error["type"], error["step"]) == ("SaveError", "b") and why in error["message"]
    assert assert_store_sound(db) == ["failed"]


@pytest.mark.parametrize(("kind", "why"), [
    ("inf", "inf is not a JSON number"),
    ("nan", "nan is not a JSON number"),
    ("big", "an integer of more than 4000 digits is too long"),
    ("surrogate", "not valid Unicode"),
    ("nested", "nested more than 200 levels deep"),
])
def test_a_node_output_json_cannot_carry_fails_the_step(project: Path, db: Path, kind: str, why: str) -> None:
    done = run(project, db, "run", "emit.local", "--input", f"kind={kind}", "--json")
    assert done.returncode == 1
    error = done.json()["error"]
    assert error["type"] == "InvalidOutput" and why in error["message"], error
    assert assert_store_sound(db) == ["failed"]
    shown = run(project, db, "runs", "show", done.json()["run_id"], "--json")
    assert shown.returncode == 0 and shown.json()["status"] == "failed"


def test_caps_call_refuses_the_same_output(project: Path, tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text('{"kind": "inf"}')
    done = wfops(project, "caps", "call", "ops.emit", "--input-file", str(tmp_path / "in.json"))
    assert done.returncode == 1 and "inf is not a JSON number" in done.stderr, done.stderr
    assert not any(text in done.stderr for text in NO_CRASH)


# -- text ------------------------------------------------------------------------------

def test_text_that_is_not_unicode_is_a_usage_error(project: Path, db: Path) -> None:
    invalid_utf8 = os.fsdecode(b"caf\xe9")  # how Python hands an argument of invalid UTF-8 over
    done = run(project, db, "run", "emit.local", "--input", f"kind={invalid_utf8}")
    assert done.returncode == 2 and "not valid Unicode" in done.stderr
    done = run(project, db, "run", "emit.local", "--input", f"{invalid_utf8}=1")
    assert done.returncode == 2 and "not valid Unicode" in done.stderr
    done = run(project, db, "resume", "no-such-run", "--outcome", "ok", "--payload", '{"by": "\\udc80"}')
    assert done.returncode == 2 and "not valid Unicode" in done.stderr
    done = run(project, db, "resume", "no-such-run", "--outcome", "ok", "--payload", f'"{invalid_utf8}"')
    assert done.returncode == 2 and "not valid Unicode" in done.stderr
    assert not db.exists() or assert_store_sound(db) == []


# -- exceptions from nodes --------------------------------------------------------------

@pytest.mark.parametrize(("kind", "type_"), [
    ("broken-str", "BrokenStr"), ("keyboard", "KeyboardInterrupt"), ("exit", "SystemExit"),
    ("plain", "ValueError"),
])
def test_whatever_a_node_raises_fails_the_step_not_the_process(project: Path, db: Path, kind: str,
                                                               type_: str) -> None:
    done = run(project, db, "run", "boom.local", "--input", f"kind={kind}", "--json")
    assert done.returncode == 1, done.stderr
    result = done.json()
    assert (result["status"], result["error"]["type"], result["error"]["step"]) == ("failed", type_, "async")
    trace = run(project, db, "runs", "trace", result["run_id"], "--json").json()
    assert [(e["step"], e["error"]["type"]) for e in trace] == [("sync", type_), ("async", type_)]
    assert len(result["error"]["message"]) < 4100  # a huge message is cut, a broken one named
    assert assert_store_sound(db) == ["failed"]


# -- resume payloads ---------------------------------------------------------------------

def test_a_payload_the_save_would_reject_is_refused_and_the_run_still_waits(project: Path, db: Path) -> None:
    started = run(project, db, "run", "ask.local", "--json")
    assert started.returncode == 3
    run_id = started.json()["run_id"]
    for payload, why in (('{"by": 5}', '5 is not of type "string"'),
                         ('{"by": "Not Lower"}', "does not match"),
                         ('{"who": "x"}', '"by" is a required property')):
        done = run(project, db, "resume", run_id, "--outcome", "approved", "--payload", payload)
        assert done.returncode == 2, done.stderr
        assert "payload cannot be saved by the interrupt at ask: state.decision" in done.stderr and why in done.stderr
        assert run(project, db, "runs", "show", run_id, "--json").json()["status"] == "interrupted"
    assert [e["step"] for e in run(project, db, "runs", "trace", run_id, "--json").json()] == ["ask"]
    done = run(project, db, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ann"}', "--json")
    assert done.returncode == 0 and done.json()["output"] == {"decision": {"by": "ann"}}
    assert assert_store_sound(db) == ["completed"]


# -- secrets -----------------------------------------------------------------------------

@pytest.mark.parametrize(("deployment", "error_type"), [
    ("secret_save", "SaveError"), ("secret_child", "InvalidInput"),
])
def test_a_message_quoting_a_secret_shows_no_form_of_it(project: Path, db: Path, tmp_path: Path,
                                                        deployment: str, error_type: str) -> None:
    summary = tmp_path / "summary.md"
    env = env_for(KEY=PEM, GITHUB_STEP_SUMMARY=str(summary))
    done = run(project, db, "run", f"{deployment}.local", "--json", env=env)
    assert done.returncode == 1
    result = done.json()
    assert result["error"]["type"] == error_type and "***" in result["error"]["message"]
    human = run(project, db, "run", f"{deployment}.local", env=env)
    shown = run(project, db, "runs", "show", result["run_id"], "--json")
    trace = run(project, db, "runs", "trace", result["run_id"], "--json")
    trace_text = run(project, db, "runs", "trace", result["run_id"])
    listed = run(project, db, "runs", "list", "--json")
    assert_no_secret(PEM, done.stdout, done.stderr, human.stdout, human.stderr, shown.stdout, trace.stdout,
                     trace_text.stdout, listed.stdout, summary.read_text())
    assert assert_store_sound(db, secret=PEM) == ["failed", "failed"]


# -- bounded time ------------------------------------------------------------------------

def test_a_pattern_that_backtracks_is_stopped_with_a_clear_error(project: Path, db: Path) -> None:
    done = finishes(lambda: run(project, db, "run", "guarded.local", "--input", f"name={EVIL_TEXT}"))
    assert done.returncode == 2
    assert "took longer than 1 s to match" in done.stderr and "does not backtrack" in done.stderr
    assert not db.exists() or assert_store_sound(db) == []


@pytest.mark.slow
def test_a_pattern_is_bounded_on_state_and_payloads_too(project: Path, db: Path) -> None:
    done = finishes(lambda: run(project, db, "run", "guarded.local", "--input", f"tag={EVIL_TEXT}", "--json"))
    assert done.returncode == 1
    assert done.json()["error"]["type"] == "SaveError" and "took longer than" in done.json()["error"]["message"]
    started = run(project, db, "run", "guarded_ask.local", "--json")
    run_id = started.json()["run_id"]
    done = finishes(lambda: run(project, db, "resume", run_id, "--outcome", "approved",
                                "--payload", json.dumps({"name": EVIL_TEXT})))
    assert done.returncode == 2 and "took longer than" in done.stderr
    assert run(project, db, "runs", "show", run_id, "--json").json()["status"] == "interrupted"
    assert assert_store_sound(db) == ["failed", "interrupted"]
