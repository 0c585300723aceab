"""A declared secret that an MCP server prints to its stderr before it dies is masked in
every channel wfops quotes that stderr in: the run's stderr line and `--json` error, every
resume, the trace and the store, `runs show`, the GitHub step summary, `check --live` as
GitHub annotations and SARIF, and `compile`; an import error quoting it, in every report
format; and a crash log. The first run is a real process (the token reaches it only through
its environment); the other commands run in process through the CLI's entry point, each
with the token in its environment and no secret declared before it (as a new process)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.harness import WFOPS, CliResult, process_env, run_cli
from tests.runner.hostile import assert_no_secret
from tests.runner.secret_project import TOKEN, make_leaky_project, quoted
from wfops.redact import MASK


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_leaky_project(tmp_path_factory.mktemp("leaky"))
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def wfops(root: Path, *args: str, **env: str) -> CliResult:
    """`wfops ARGS` in process in `root`, with the token in its environment."""
    return run_cli(*args, cwd=root, env={"MCP_TOKEN": TOKEN, "GITHUB_STEP_SUMMARY": None, **env})


def wfops_process(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`wfops ARGS` as a real process in `root`, with the token in its environment."""
    return subprocess.run([*WFOPS, *args], cwd=root, capture_output=True, text=True, timeout=120,
                          env=process_env({"MCP_TOKEN": TOKEN, "GITHUB_STEP_SUMMARY": None, **env}))


@pytest.mark.slow
def test_a_dying_server_s_token_is_masked_in_the_run_its_resumes_and_the_store(project: Path,
                                                                               tmp_path: Path) -> None:
    db, summary = str(tmp_path / "runs.db"), tmp_path / "summary.md"
    ran = wfops_process(project, "run", "dies.local", "--json", "--db", db, GITHUB_STEP_SUMMARY=str(summary))
    assert ran.returncode == 3, ran.stderr
    error = json.loads(ran.stdout)["error"]
    assert error["type"] == "RunStopped" and quoted(error["message"]), error
    assert quoted(ran.stderr)
    run_id = error["message"].split()[1]
    texts = [ran.stdout, ran.stderr]
    # The server dies again on every resume (one resume, then a resume of the resumed run), and
    # its stderr is quoted again.
    resumed = wfops(project, "resume", run_id, "--db", db)
    assert resumed.returncode == 3 and quoted(resumed.stderr), resumed.stderr
    resumed_json = wfops(project, "resume", run_id, "--json", "--db", db)
    assert quoted(json.loads(resumed_json.stdout)["error"]["message"])
    texts += [resumed.stdout, resumed.stderr, resumed_json.stdout, resumed_json.stderr]
    trace = wfops(project, "runs", "trace", run_id, "--json", "--db", db)
    retries = [e["error"]["message"] for e in json.loads(trace.stdout) if e["kind"] == "retry"]
    assert len(retries) == 3 and all(quoted(m) for m in retries), retries  # one per drive, stored masked

    caught = wfops(project, "run", "caught.local", "--json", "--db", db, GITHUB_STEP_SUMMARY=str(summary))
    assert caught.returncode == 0, caught.stderr
    assert quoted(json.loads(caught.stdout)["output"]["problem"]["message"])
    caught_id = json.loads(caught.stdout)["run_id"]
    # Shown after the variable is unset: what is stored was masked when it was written.
    shown = [wfops(project, "runs", "show", rid, *fmt, "--db", db, MCP_TOKEN="")
             for rid in (run_id, caught_id) for fmt in ((), ("--json",))]
    assert quoted(json.loads(shown[3].stdout)["state"]["problem"]["message"])
    traced = wfops(project, "runs", "trace", caught_id, "--db", db, MCP_TOKEN="")
    assert quoted(traced.stdout) and quoted(summary.read_text())
    texts += [trace.stdout, caught.stdout, caught.stderr, traced.stdout, summary.read_text()]
    texts += [done.stdout + done.stderr for done in shown]
    assert_no_secret(TOKEN, *texts)
    stored = b"".join(path.read_bytes() for path in Path(db).parent.glob("runs.db*"))
    assert TOKEN.encode() not in stored and f"dying with {MASK}".encode() in stored


@pytest.mark.slow
@pytest.mark.parametrize("args", [("check", "--live", "--format", "github"),
                                  ("check", "--live", "--format", "sarif"),
                                  ("check", "--live", "--format", "json"),
                                  ("compile",)])
def test_a_server_that_dies_at_start_is_reported_with_its_token_masked(project: Path,
                                                                        args: tuple[str, ...]) -> None:
    # No deployment runs here: every secret any deployment lists is masked.
    done = wfops(project, *args, LEAKY_MODE="start")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "source-unavailable" in done.stdout + done.stderr
    assert quoted(done.stdout + done.stderr.replace("%0A", "\n"))
    assert_no_secret(TOKEN, done.stdout, done.stderr)
    if "sarif" in args:
        [result] = json.loads(done.stdout)["runs"][0]["results"]
        assert quoted(result["message"]["text"])


@pytest.mark.slow
def test_a_token_the_server_prints_on_its_stdout_is_masked_in_the_warning(project: Path) -> None:
    done = wfops(project, "check", "--live", LEAKY_MODE="stdout")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"logged in with {MASK}" in done.stderr and TOKEN not in done.stderr, done.stderr


@pytest.mark.slow
def test_a_run_whose_server_dies_at_start_is_refused_with_its_token_masked(project: Path, tmp_path: Path) -> None:
    done = wfops(project, "run", "dies.local", "--json", "--db", str(tmp_path / "runs.db"), LEAKY_MODE="start")
    assert done.returncode != 0 and quoted(done.stdout + done.stderr), done.stdout + done.stderr
    assert_no_secret(TOKEN, done.stdout, done.stderr)


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_an_import_error_quoting_a_secret_is_reported_masked_in_every_format(project: Path, fmt: str) -> None:
    done = wfops(project, "check", "--format", fmt, LEAKY_IMPORT="1")
    assert done.returncode == 1 and "source-import-error" in done.stdout, done.stdout + done.stderr
    assert quoted(done.stdout) and TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize("fmt", ["github", "sarif", "text"])
def test_a_validate_cache_hit_replays_the_import_error_masked(tmp_path: Path, fmt: str) -> None:
    # A hit loads no deployment: what it replays was masked when the finding was made.
    root = make_leaky_project(tmp_path / "project")
    first, hit = (wfops(root, "validate", "--format", fmt, LEAKY_IMPORT="1") for _ in range(2))
    for done in (first, hit):
        assert done.returncode == 1 and quoted(done.stdout), done.stdout + done.stderr
        assert TOKEN not in done.stdout + done.stderr
    cached = b"".join(path.read_bytes() for path in (root / ".wfops").rglob("*") if path.is_file())
    assert cached and TOKEN.encode() not in cached


def test_a_crash_log_masks_a_declared_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wfops.crashlog import report_crash
    from wfops.redact import declare

    declare([TOKEN])
    try:
        raise RuntimeError(f"unexpected: the server said dying with {TOKEN}")
    except RuntimeError as exc:
        assert report_crash(exc) == 70
    line = capsys.readouterr().err
    log = Path(line.split("the details are in ")[1].strip())
    try:
        assert quoted(line) and quoted(log.read_text())
        assert_no_secret(TOKEN, line, log.read_text())
    finally:
        log.unlink()
