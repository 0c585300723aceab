"""wfops on the shared PostgreSQL store, through the real CLI and API, on a real server:
everything that works on SQLite, from more than one working copy; passwords never shown."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pgserver import Cluster
from tests.runner.helpers import as_json, env_for, make_run_project, wfops
from wfops.api import Project
from wfops.errors import StoreError
from wfops.store import open_store
from wfops.store.migrations import LATEST, MIGRATIONS

SECRET = "s3cr3t-Pa55"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_project(tmp_path_factory.mktemp("pgproject"))


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "here"))


def on(url: str, **extra: str) -> dict[str, str | None]:
    return env_for(WFOPS_DB=url, **extra)


def test_everyday_cli_on_postgres(project: Path, tmp_path: Path, pg_url: str) -> None:
    summary = tmp_path / "summary.md"
    done = wfops(project, "run", "chain.local", "--json", env=on(pg_url, GITHUB_STEP_SUMMARY=str(summary)))
    assert done.returncode == 0, done.stderr
    run_id = as_json(done)["run_id"]
    assert as_json(done)["output"] == {"n": 7}
    assert run_id in summary.read_text() and "| Steps | 6 |" in summary.read_text()  # the job summary
    assert not (project / ".wfops" / "wfops.db").exists()  # the URL won: nothing local

    listed = as_json(wfops(project, "runs", "list", "--json", env=on(pg_url)))
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "completed")]
    shown = wfops(project, "runs", "show", run_id, env=on(pg_url))
    assert "status     completed" in shown.stdout and "steps      6" in shown.stdout
    steps = [e["step"] for e in as_json(wfops(project, "runs", "trace", run_id, "--json", env=on(pg_url)))]
    assert steps == [f"s{i}" for i in range(1, 7)]

    assert wfops(project, "runs", "rm", run_id, "--db", pg_url).returncode == 0
    gone = wfops(project, "runs", "show", run_id, "--db", pg_url)
    assert gone.returncode == 1 and "no run" in gone.stderr
    assert wfops(project, "run", "failing.local", env=on(pg_url)).returncode == 1
    pruned = wfops(project, "runs", "prune", "--older-than", "0", env=on(pg_url))
    assert pruned.returncode == 0 and "pruned 1 finished run " in pruned.stdout


def test_approve_from_another_working_copy(project: Path, tmp_path: Path, pg_url: str) -> None:
    """CI interrupts a run; a teammate approves it from a laptop: another checkout, same store."""
    asked = wfops(project, "run", "approval.local", "--json", env=on(pg_url))
    assert asked.returncode == 3, asked.stderr
    run_id = as_json(asked)["run_id"]
    laptop = Path(shutil.copytree(project, tmp_path / "laptop"))
    # The laptop's checkout has moved on: the stored artifact runs, not the edited file.
    (laptop / "workflows" / "approval.yaml").write_text("name: approval\nsteps: []\n")
    busy_free = wfops(laptop, "runs", "show", run_id, "--json", env=on(pg_url))
    assert as_json(busy_free)["status"] == "interrupted"
    done = wfops(laptop, "resume", run_id, "--outcome", "approved", "--payload", '{"by": "ana"}', "--json",
                 env=on(pg_url))
    assert done.returncode == 0, done.stderr
    assert as_json(done)["output"] == {"message": "approved by ana"}


def test_mcp_face_on_postgres(project: Path, pg_url: str) -> None:
    from mcp import Client

    from wfops.mcpserver.app import build_server

    async def main() -> None:
        async with Client(build_server(Project(project, db=pg_url))) as client:
            out = (await client.call_tool("run_deployment", {"deployment": "approval.local"})).structured_content
            run_id = out["run"]["run_id"]
            assert out["run"]["status"] == "interrupted"
            done = (await client.call_tool("resume_run", {"run_id": run_id, "outcome": "approved",
                                                          "payload": {"by": "bo"}})).structured_content
            assert done["run"]["status"] == "completed"
            listed = (await client.call_tool("list_runs", {})).structured_content
            assert [r["run_id"] for r in listed["runs"]] == [run_id]

    asyncio.run(main())


def test_runs_copy_is_idempotent(project: Path, pg_url: str) -> None:
    local = {}
    for deployment in ("chain.local", "approval.local", "failing.local"):
        done = wfops(project, "run", deployment, "--json")
        local[deployment] = as_json(done)["run_id"]
    first = wfops(project, "runs", "copy", "--to", pg_url, "--json")
    assert first.returncode == 0, first.stderr
    assert sorted(as_json(first)["copied"]) == sorted(local.values())
    again = wfops(project, "runs", "copy", "--to", pg_url)
    assert again.returncode == 0 and "copied 0 runs" in again.stdout and "(3 already there)" in again.stdout

    shared, mine = Project(project, db=pg_url).runs(), Project(project).runs()
    assert shared == mine  # same runs, same order, same fields (steps, stamps, output)
    chain = local["chain.local"]
    assert (as_json(wfops(project, "runs", "trace", chain, "--json", env=on(pg_url)))
            == as_json(wfops(project, "runs", "trace", chain, "--json")))
    # The copied interrupted run continues on the shared store, from its stored artifact.
    done = wfops(project, "resume", local["approval.local"], "--outcome", "approved", "--payload",
                 '{"by": "cy"}', "--json", env=on(pg_url))
    assert done.returncode == 0 and as_json(done)["output"] == {"message": "approved by cy"}
    assert as_json(wfops(project, "runs", "show", local["approval.local"], "--json"))["status"] == "interrupted"


def test_libpq_variables_fill_in_the_url(project: Path, pg_cluster: Cluster, pg_url: str) -> None:
    """`postgresql://` alone: host, database and user come from PGHOST, PGDATABASE, PGUSER
    (and a password from PGPASSWORD), as for every libpq client."""
    database = pg_url.split("@/", 1)[1].split("?")[0]
    env = env_for(WFOPS_DB="postgresql://", PGHOST=str(pg_cluster.socket_dir), PGDATABASE=database,
                  PGUSER="postgres", PGPASSWORD=SECRET)
    done = wfops(project, "run", "chain.local", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert [r.run_id for r in Project(project, db=pg_url).runs()] == [as_json(done)["run_id"]]
    wrong = wfops(project, "runs", "list", env={**env, "PGDATABASE": f"nothing_{SECRET}"})
    assert wrong.returncode == 4 and SECRET not in wrong.stderr and "nothing_***" in wrong.stderr


def test_schema_is_created_once_and_a_newer_one_refused(pg_url: str) -> None:
    import psycopg

    open_store(pg_url).close()
    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        assert versions == list(range(1, LATEST + 1))
        conn.execute("INSERT INTO schema_version VALUES (%s, 'future')", (LATEST + 1,))
    with pytest.raises(StoreError, match="created by a newer wfops"):
        open_store(pg_url)


def test_upgrade_from_v1_keeps_runs(pg_url: str) -> None:
    """The one migration list, in PostgreSQL's dialect: a v1 database is brought to LATEST."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        for statement in MIGRATIONS[0].statements("postgres"):
            conn.execute(statement.encode())
        conn.execute("INSERT INTO schema_version VALUES (1, 'then')")
        conn.execute("INSERT INTO runs VALUES ('old', 'd', 'wf', 'h', 'completed', 'ok', '{\"a\":1}', NULL, NULL,"
                     " '{}', 1, 't0', 't1')")
        conn.execute("INSERT INTO run_inputs VALUES ('old', '{}', '{}')")
        conn.execute("INSERT INTO trace VALUES ('old', 1, 's', 'call', 1, '{}', 'ok', '{}', '[]', 'end', NULL,"
                     " 't0', 't1')")
    with open_store(pg_url) as store:
        record = store.get_run("old")
        assert record.snapshot.output == {"a": 1} and record.steps == 1
        assert [e.step for e in store.trace("old")] == ["s"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == list(range(1, LATEST + 1))


def test_copy_onto_itself_is_refused(project: Path, pg_url: str) -> None:
    done = wfops(project, "runs", "copy", "--to", pg_url, "--db", pg_url)
    assert done.returncode == 2 and "already in" in done.stderr


# -- the password never shows ---------------------------------------------------------------

def secret_url(cluster: Cluster, database: str) -> str:
    return cluster.url(database, user="postgres", password=SECRET)


def test_password_hidden_when_the_server_is_unreachable(project: Path, tmp_path: Path) -> None:
    for url in (f"postgresql://ana:{SECRET}@/wfops?host={tmp_path}/nowhere",
                f"postgresql://ana:{SECRET}@127.0.0.1:1/wfops?connect_timeout=3",
                f"postgres:///wfops?host={tmp_path}&password={SECRET}"):
        for args in (("run", "chain.local"), ("runs", "list"), ("runs", "copy", "--to", url)):
            env = on(url) if args[0] != "runs" or args[1] != "copy" else env_for()
            done = wfops(project, *args, env=env)
            assert done.returncode == 4, (args, done.stdout, done.stderr)
            assert SECRET not in done.stdout + done.stderr
            assert "cannot connect" in done.stderr and "***" in done.stderr
        with pytest.raises(StoreError) as caught:
            open_store(url)
        assert SECRET not in str(caught.value) + str(caught.value.hint) + repr(caught.value)
        assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_password_hidden_in_server_errors_and_reports(project: Path, pg_cluster: Cluster, pg_url: str) -> None:
    missing = wfops(project, "runs", "list", "--db", secret_url(pg_cluster, "no_such_db"))
    assert missing.returncode == 4 and "no_such_db" in missing.stderr
    assert SECRET not in missing.stdout + missing.stderr
    database = pg_url.split("@/", 1)[1].split("?")[0]
    url = secret_url(pg_cluster, database)  # trust auth: the password is accepted and unused
    wfops(project, "run", "chain.local")
    copied = wfops(project, "runs", "copy", "--to", url)
    assert copied.returncode == 0 and "copied 1 run to postgresql://postgres:***@/" in copied.stdout
    assert SECRET not in copied.stdout
    report = Project(project).copy_runs(url)
    assert SECRET not in str(report.to_dict())
    unknown = wfops(project, "runs", "show", "nope", "--db", url)
    assert unknown.returncode == 1 and SECRET not in unknown.stdout + unknown.stderr


def test_a_crash_log_hides_the_password(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from wfops.crashlog import report_crash\n"
        f"report_crash(RuntimeError('boom at postgresql://ana:{SECRET}@db/x password={SECRET}'))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "TMPDIR": str(tmp_path)})
    assert SECRET not in done.stderr
    logs = list(tmp_path.glob("wfops-crash-*.log"))
    assert logs and all(SECRET not in log.read_text() for log in logs)
