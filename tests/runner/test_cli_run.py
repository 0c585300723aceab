"""`wfops run`, `resume` and `runs` (in process, tests/harness.py) against a real project and store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.harness import run_cli
from tests.runner.helpers import as_json, env_for, wfops
from wfops.api.runs import RUN_KEYS

PUBLIC_KEYS = set(RUN_KEYS)


def test_run_completes_and_is_stored(project: Path) -> None:
    done = wfops(project, "run", "chain.local", "--json")
    assert done.returncode == 0, done.stderr
    result = as_json(done)
    assert set(result) == PUBLIC_KEYS
    assert result["status"] == "completed" and result["outcome"] == "ok"
    assert result["output"] == {"n": 7}
    assert result["artifact"].startswith("sha256:") or len(result["artifact"]) >= 16
    shown = as_json(wfops(project, "runs", "show", result["run_id"], "--json"))
    assert {k: shown[k] for k in result} == result
    assert shown["input"] == {"start": 1} and shown["state"] == {"n": 7}  # input and final state
    trace = as_json(wfops(project, "runs", "trace", result["run_id"], "--json"))
    assert [e["step"] for e in trace] == [f"s{i}" for i in range(1, 7)]
    assert [e["seq"] for e in trace] == sorted(e["seq"] for e in trace)
    assert trace[0]["input"] == {"n": 1} and trace[0]["output"] == {"n": 2}
    assert trace[0]["state_changes"] == [{"path": "state.n", "value": 2}]
    part = as_json(wfops(project, "runs", "trace", result["run_id"], "--from", str(trace[2]["seq"]),
                         "--limit", "2", "--json"))
    assert [e["step"] for e in part] == ["s3", "s4"]


def test_text_output_and_progress_lines(project: Path) -> None:
    done = wfops(project, "run", "chain.local", "--input", "start=10")
    assert done.returncode == 0, done.stderr
    assert "completed (outcome ok)" in done.stdout and '"n": 16' in done.stdout
    assert done.stderr.count("\n") >= 6 and "s6" in done.stderr  # one plain line per step when piped
    listing = wfops(project, "runs", "list", "--deployment", "chain.local")
    assert listing.returncode == 0
    assert listing.stdout.splitlines()[0].split()[:3] == ["RUN", "DEPLOYMENT", "STATUS"]
    trace = wfops(project, "runs", "trace", done.stdout.split()[1])
    assert "s1 [call] ok -> s2" in trace.stdout and "state.n=11" in trace.stdout


def test_json_mode_keeps_stdout_to_one_object(project: Path) -> None:
    done = wfops(project, "run", "chain.local", "--json", "-i", "start=3")
    json.loads(done.stdout)  # nothing else on stdout
    assert done.stderr == ""  # and no progress when nobody watches


def test_input_layers_file_then_flags(project: Path, tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text("start: 100\n")
    done = wfops(project, "run", "chain.local", "--json", "--input-file", str(tmp_path / "in.yaml"))
    assert as_json(done)["output"] == {"n": 106}
    done = wfops(project, "run", "chain.local", "--json", "--input-file", str(tmp_path / "in.yaml"),
                 "--input", "start=200")
    assert as_json(done)["output"] == {"n": 206}


def test_failed_run_exits_1(project: Path) -> None:
    done = wfops(project, "run", "failing.local", "--json")
    assert done.returncode == 1, done.stderr
    result = as_json(done)
    assert result["status"] == "failed" and "kaboom" in result["error"]["message"]
    assert result["error"]["step"] == "boom"


def test_interrupt_then_resume(project: Path) -> None:
    done = wfops(project, "run", "approval.local", "--json")
    assert done.returncode == 3, done.stderr
    result = as_json(done)
    run_id = result["run_id"]
    assert result["status"] == "interrupted"
    assert result["interrupt"]["step"] == "ask" and result["interrupt"]["request"] == {"change": "ship it"}
    before = as_json(wfops(project, "runs", "trace", run_id, "--json"))

    bad = wfops(project, "resume", run_id, "--outcome", "approved", "--payload", '{"by": ""}', "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["status"] == "refused"
    bad = wfops(project, "resume", run_id, "--outcome", "maybe", "--payload", '{"by": "ana"}')
    assert bad.returncode == 2
    bad = wfops(project, "resume", run_id, "--outcome", "approved", "--payload", "{not json")
    assert bad.returncode == 2 and "--payload" in bad.stderr
    assert as_json(wfops(project, "runs", "trace", run_id, "--json")) == before
    assert as_json(wfops(project, "runs", "show", run_id, "--json"))["status"] == "interrupted"

    ok = wfops(project, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ana"}', "--json")
    assert ok.returncode == 0, ok.stderr
    assert as_json(ok)["output"] == {"message": "approved by ana"}
    again = wfops(project, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ana"}')
    assert again.returncode == 2 and "nothing to resume" in again.stderr


def test_refusals_exit_2_and_store_nothing(project: Path) -> None:
    before = as_json(wfops(project, "runs", "list", "--json", "--limit", "1000"))
    unknown = wfops(project, "run", "nope.local")
    assert unknown.returncode == 2 and "unknown-deployment" in unknown.stderr
    bad_input = wfops(project, "run", "chain.local", "--input", "start=oops")
    assert bad_input.returncode == 2, bad_input.stderr
    assert "start" in bad_input.stderr and "Traceback" not in bad_input.stderr
    no_secret = wfops(project, "run", "secretive.local")
    assert no_secret.returncode == 2 and "TOKEN" in no_secret.stderr
    usage = wfops(project, "run", "chain.local", "--input", "=1")
    assert usage.returncode == 2
    assert as_json(wfops(project, "runs", "list", "--json", "--limit", "1000")) == before


def test_stale_lock_refuses(project: Path, tmp_path: Path) -> None:
    import shutil

    copy = Path(shutil.copytree(project, tmp_path / "copy", ignore=shutil.ignore_patterns(".wfops")))
    wf = copy / "workflows" / "failing.yaml"
    wf.write_text(wf.read_text().replace("kaboom", "kaboom!"))
    done = wfops(copy, "run", "failing.local")
    assert done.returncode == 2 and "stale-lock" in done.stderr
    assert not (copy / ".wfops" / "wfops.db").exists() or \
        as_json(wfops(copy, "runs", "list", "--json")) == []


def test_unknown_run_ids_exit_1(project: Path) -> None:
    for args in (("runs", "show", "nope"), ("runs", "trace", "nope"), ("runs", "rm", "nope"),
                 ("resume", "nope")):
        done = wfops(project, *args)
        assert done.returncode == 1, (args, done.stderr)
        assert "nope" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) <= 2


def test_secrets_never_reach_the_store(project: Path) -> None:
    import base64
    import urllib.parse

    secret = "s3cr3t/value+with=odd&chars"
    done = wfops(project, "run", "secretive.local", "--json", env=env_for(TOKEN=secret))
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout and "***" in done.stdout
    trace = wfops(project, "runs", "trace", as_json(done)["run_id"], "--json")
    assert secret not in trace.stdout
    db = project / ".wfops" / "wfops.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = b"".join(p.read_bytes() for p in db.parent.glob("wfops.db*"))
    for form in (secret, base64.b64encode(secret.encode()).decode(), urllib.parse.quote(secret),
                 urllib.parse.quote_plus(secret)):
        assert form.encode() not in data, form


def test_rm_and_prune(project: Path) -> None:
    run_id = as_json(wfops(project, "run", "failing.local", "--json"))["run_id"]
    assert wfops(project, "runs", "rm", run_id).returncode == 0
    assert wfops(project, "runs", "show", run_id).returncode == 1
    pruned = wfops(project, "runs", "prune", "--older-than", "0")
    assert pruned.returncode == 0 and "pruned" in pruned.stdout
    remaining = as_json(wfops(project, "runs", "list", "--json", "--limit", "1000"))
    assert all(r["status"] not in ("completed", "failed") for r in remaining)


def test_github_step_summary_is_appended(project: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    done = wfops(project, "run", "chain.local", "--json", env=env_for(GITHUB_STEP_SUMMARY=str(summary)))
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("before\n") and as_json(done)["run_id"] in text or "completed" in text
    assert len(text) > len("before\n") + 20


def test_bad_status_filter_is_a_usage_error(project: Path) -> None:
    done = wfops(project, "runs", "list", "--status", "bogus")
    assert done.returncode == 2 and "running, completed, failed, interrupted" in done.stderr


def test_resume_outside_the_project_with_db(project: Path, tmp_path: Path) -> None:
    run_id = as_json(wfops(project, "run", "approval.local", "--json"))["run_id"]
    db = project / ".wfops" / "wfops.db"
    done = run_cli("resume", run_id, "--outcome", "approved", "--payload", '{"by": "bo"}', "--json",
                   "--db", str(db), cwd=tmp_path, env=env_for())
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"message": "approved by bo"}


def test_resume_uses_the_stored_artifacts_not_the_files(project: Path, tmp_path: Path) -> None:
    import shutil

    copy = Path(shutil.copytree(project, tmp_path / "copy", ignore=shutil.ignore_patterns(".wfops")))
    run_id = as_json(wfops(copy, "run", "approval.local", "--json"))["run_id"]
    wf = copy / "workflows" / "approval.yaml"
    wf.write_text(wf.read_text().replace("approved by {by}", "edited after the run started {by}"))
    done = wfops(copy, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "cy"}', "--json")
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"message": "approved by cy"}
