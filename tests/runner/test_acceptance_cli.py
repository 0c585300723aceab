"""Acceptance: the documented surface of `run`, `resume` and `runs` -- JSON shapes, exit
codes, one-line usage errors, --db / WFOPS_DB, --input parsing, --input-file, drift
policy and the GitHub step summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import CliResult, run_cli
from tests.runner.acceptance_project import make_acceptance_project
from tests.runner.helpers import as_json, env_for, wfops
from tests.runner.test_acceptance_steps import PUBLIC_KEYS, TRACE_KEYS


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_acceptance_project(tmp_path_factory.mktemp("acceptance-cli"))


def bare(cwd: Path, *args: str, env: dict[str, str | None] | None = None) -> CliResult:
    """`wfops` without --project, as a user types it."""
    return run_cli(*args, cwd=cwd, env=env or env_for())


@pytest.mark.parametrize("args", [
    ["run"], ["run", "calls", "--bogus"], ["run", "calls", "--input"], ["run", "calls", "--input", "novalue"],
    ["run", "calls", "--input", "=1"], ["run", "calls", "--input", "a..b=1"],
    ["run", "calls", "--input-file", "missing.json"], ["resume"], ["resume", "x", "--payload", "{bad"],
    ["runs", "show"], ["runs", "trace"], ["runs", "list", "--limit", "0"], ["runs", "list", "--limit", "x"],
    ["runs", "list", "--status", "bogus"],
    ["resume", "x", "--payload", "[" * 20000 + "]" * 20000],  # was a RecursionError crash (exit 70)
    ["run", "calls", "--input", "x=" + "[" * 20000 + "]" * 20000],
])
def test_usage_errors_exit_2_with_one_line(proj: Path, args: list[str]) -> None:
    done = wfops(proj, *args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("wfops: error: ")


@pytest.mark.parametrize(("content", "name"), [
    ("[1, 2]", "list.json"), ("{bad", "bad.json"), ("a: !!python/object:os.system x\n", "evil.yaml"),
    ("", "empty.json"),
])
def test_bad_input_files_refuse_without_traceback(proj: Path, tmp_path: Path, content: str, name: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    done = wfops(proj, "run", "calls", "--input-file", str(path), "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["status"] == "refused"  # --json: always one object
    assert str(path) in done.stderr and "Traceback" not in done.stderr


def test_input_precedence_defaults_file_flags(proj: Path, tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text('{"n": 10, "v": 5}')
    (tmp_path / "in.yaml").write_text("n: 20\n")
    assert as_json(wfops(proj, "run", "calls", "--json"))["output"]["n"] == 6
    assert as_json(wfops(proj, "run", "calls", "--json", "--input-file", str(tmp_path / "in.json")))["output"]["n"] == 20
    done = wfops(proj, "run", "calls", "--json", "--input-file", str(tmp_path / "in.yaml"), "-i", "n=30")
    assert as_json(done)["output"]["n"] == 60
    # V is JSON when it parses, else a string: "4" is an integer, "x" a string (refused by the schema)
    assert wfops(proj, "run", "calls", "--json", "--input", "n=x").returncode == 2
    assert wfops(proj, "run", "calls", "--json", "--input", 'n="4"').returncode == 2


def test_invalid_input_refuses_and_stores_nothing(proj: Path, tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    done = wfops(proj, "run", "calls", "--input", "n=abc", "--db", str(db))
    assert done.returncode == 2 and "$.n" in done.stderr
    listing = wfops(proj, "runs", "list", "--json", "--db", str(db))
    assert listing.returncode == 0 and as_json(listing) == []


def test_db_flag_and_env_var(proj: Path, tmp_path: Path) -> None:
    flag_db, env_db = tmp_path / "flag.db", tmp_path / "env.db"
    first = as_json(wfops(proj, "run", "calls", "--json", "--db", str(flag_db)))
    second = as_json(wfops(proj, "run", "calls", "--json", env=env_for(WFOPS_DB=str(env_db))))
    assert flag_db.exists() and env_db.exists()
    ids = lambda done: [r["run_id"] for r in as_json(done)]  # noqa: E731
    assert ids(wfops(proj, "runs", "list", "--json", "--db", str(flag_db))) == [first["run_id"]]
    assert ids(wfops(proj, "runs", "list", "--json", env=env_for(WFOPS_DB=str(env_db)))) == [second["run_id"]]
    # --db wins over WFOPS_DB; both work outside any project
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    done = bare(outside, "runs", "show", first["run_id"], "--json", "--db", str(flag_db),
                env=env_for(WFOPS_DB=str(env_db)))
    assert done.returncode == 0 and as_json(done) == first
    done = bare(outside, "runs", "trace", second["run_id"], "--json", env=env_for(WFOPS_DB=str(env_db)))
    assert done.returncode == 0 and len(as_json(done)) == 3
    import sqlite3

    with sqlite3.connect(flag_db) as conn:
        assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_runs_list_filters_order_and_shape(proj: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "list.db")
    made = [as_json(wfops(proj, "run", d, "--json", "--db", db)) for d in ("calls", "conds", "calls")]
    wfops(proj, "run", "badred", "--db", db)
    everything = as_json(wfops(proj, "runs", "list", "--json", "--db", db))
    assert isinstance(everything, list) and len(everything) == 4
    assert all(set(r) == PUBLIC_KEYS for r in everything)
    assert [r["run_id"] for r in everything[1:]] == [m["run_id"] for m in reversed(made)]  # newest first
    calls = as_json(wfops(proj, "runs", "list", "--json", "--db", db, "--deployment", "calls"))
    assert [r["run_id"] for r in calls] == [made[2]["run_id"], made[0]["run_id"]]
    failed = as_json(wfops(proj, "runs", "list", "--json", "--db", db, "--status", "failed"))
    assert [r["deployment"] for r in failed] == ["badred"] and failed[0]["error"]["type"] == "SaveError"
    assert len(as_json(wfops(proj, "runs", "list", "--json", "--db", db, "--limit", "2"))) == 2
    assert as_json(wfops(proj, "runs", "list", "--json", "--db", db, "--status", "interrupted")) == []
    text = wfops(proj, "runs", "list", "--db", db)
    assert text.returncode == 0 and made[0]["run_id"] in text.stdout


def test_show_and_trace_shapes_and_unknown_ids(proj: Path) -> None:
    result = as_json(wfops(proj, "run", "loop", "--json"))
    assert as_json(wfops(proj, "runs", "show", result["run_id"], "--json")) == result
    entries = as_json(wfops(proj, "runs", "trace", result["run_id"], "--json"))
    assert all(set(e) == TRACE_KEYS for e in entries)
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    for entry in entries:
        assert entry["started_at"] <= entry["ended_at"]
    for verb in ("show", "trace"):
        for flags in ([], ["--json"]):
            done = wfops(proj, "runs", verb, "no-such-run", *flags)
            assert done.returncode == 1 and done.stdout == "" and "no-such-run" in done.stderr
    assert wfops(proj, "resume", "no-such-run").returncode == 1
    for odd in ("../x", "a/b", ""):  # ids no lock file can be named after are still just unknown
        for args in (["runs", "show", odd], ["runs", "rm", odd], ["resume", odd]):
            done = wfops(proj, *args)
            assert done.returncode == 1, (args, done.stderr)


def test_drift_policy_fail_refuses_and_warn_runs(proj: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "drifted"
    shutil.copytree(proj, copy, ignore=shutil.ignore_patterns(".wfops", "__pycache__"))
    for module in ("greet_a.py", "greet_b.py"):
        path = copy / module
        path.write_text(path.read_text().replace("    text: str\n", "    text: str\n    extra: int = 0\n"))
    refused = wfops(copy, "run", "hi.a", "--json")
    assert refused.returncode == 2 and json.loads(refused.stdout)["status"] == "refused"
    assert "capability-drift" in refused.stderr
    assert "capability-drift" in {d["code"] for d in json.loads(refused.stdout)["diagnostics"]}
    warned = wfops(copy, "run", "hi.b", "--json")
    assert warned.returncode == 0, warned.stderr
    assert "capability-drift" in warned.stderr and as_json(warned)["status"] == "completed"
    assert as_json(wfops(copy, "runs", "list", "--json"))[0]["deployment"] == "hi.b"  # hi.a stored nothing


def test_github_step_summary_for_run_and_resume(proj: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = env_for(GITHUB_STEP_SUMMARY=str(summary), TOK="tok-123456")
    done = wfops(proj, "run", "ask", "--json", env=env)
    assert done.returncode == 3
    rid = as_json(done)["run_id"]
    text = summary.read_text()
    assert "interrupted" in text and "```mermaid" in text and rid in text
    assert "`approved`, `rejected`" in text  # the resume command says which outcomes it takes
    assert "tok-123456" not in text
    done = wfops(proj, "resume", rid, "--outcome", "approved", "--payload", '{"by": "ci"}', env=env)
    assert done.returncode == 0
    text = summary.read_text()
    assert "completed" in text and '"by": "ci"' in text and text.count("```mermaid") == 2
    # an unwritable summary path only warns
    env = env_for(GITHUB_STEP_SUMMARY=str(tmp_path / "no" / "such" / "dir" / "s.md"))
    done = wfops(proj, "run", "calls", "--json", env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "completed"
    assert "Traceback" not in done.stderr


def test_input_file_dash_reads_stdin(proj: Path) -> None:
    cmd = ["run", "calls", "--json", "--input-file", "-", "--project", str(proj)]
    done = run_cli(*cmd, stdin='{"n": 9}', env=env_for())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"]["n"] == 18
    done = run_cli(*cmd, stdin="[1", env=env_for())
    assert done.returncode == 2 and json.loads(done.stdout)["status"] == "refused"
    assert "--input-file -" in done.stderr


@pytest.mark.slow
def test_show_says_when_a_running_run_has_no_driver(proj: Path, tmp_path: Path) -> None:
    # A real process, killed: the point is a run whose driver is gone.
    import time

    from tests.runner.helpers import spawn

    db = str(tmp_path / "crash.db")
    proc = spawn(proj, "run", "sleepy", "--json", "--input", "secs=30", "--db", db)
    try:
        deadline = time.monotonic() + 60  # a hang guard
        runs: list = []
        while time.monotonic() < deadline and not runs:
            time.sleep(0.2)
            if Path(db).exists():
                runs = as_json(wfops(proj, "runs", "list", "--json", "--db", db))
        assert runs and runs[0]["status"] == "running"
        live = wfops(proj, "runs", "show", runs[0]["run_id"], "--db", db)
        assert live.returncode == 0 and "no process is driving it" not in live.stdout
    finally:
        proc.kill()
        proc.communicate()
    dead = wfops(proj, "runs", "show", runs[0]["run_id"], "--db", db)
    assert dead.returncode == 0 and f"wfops resume {runs[0]['run_id']}" in dead.stdout
    assert as_json(wfops(proj, "runs", "show", runs[0]["run_id"], "--json", "--db", db))["status"] == "running"
