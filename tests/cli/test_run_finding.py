"""The dev loop (`run --unlocked`), finding runs (`last`, `runs list` filters) and the
complete run object, through the real CLI against a real project and SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.cli.loop_project import write_loop_project
from tests.harness import run_cli
from wfops.api.runs import RUN_KEYS, since_stamp
from wfops.errors import UsageError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_loop_project(tmp_path / "p", items=3)


def _edit_description(root: Path) -> None:
    workflow = root / "workflows" / "loop.yaml"
    workflow.write_text(workflow.read_text().replace("Work on every item.", "Work on each item."))


def test_unlocked_runs_the_working_tree_without_touching_the_lock(root: Path) -> None:
    _edit_description(root)
    lock = (root / "wfops.lock").read_bytes()
    refused = run_cli("run", "loop.local", cwd=root)
    assert refused.code == 2 and "stale" in refused.stdout + refused.stderr
    done = run_cli("run", "loop.local", "--unlocked", "--json", cwd=root)
    assert done.code == 0, done.stderr
    shown = done.json()
    assert shown["status"] == "completed" and shown["unlocked"] is True
    assert (root / "wfops.lock").read_bytes() == lock
    assert run_cli("runs", "show", "last", "--json", cwd=root).json()["unlocked"] is True
    listed = run_cli("runs", "list", cwd=root).stdout
    assert "completed (unlocked)" in listed
    text = run_cli("run", "loop.local", "--unlocked", cwd=root)
    assert "ran the working tree (--unlocked)" in text.stdout
    # Still refused after the unlocked runs: they recorded no gate decision for the locked path.
    assert run_cli("run", "loop.local", cwd=root).code == 2


def test_unlocked_still_validates_first(root: Path) -> None:
    workflow = root / "workflows" / "loop.yaml"
    workflow.write_text(workflow.read_text().replace("uses: ops.work", "uses: ops.nosuch"))
    done = run_cli("run", "loop.local", "--unlocked", "--json", cwd=root)
    assert done.code == 2 and done.json()["status"] == "refused"
    assert "nosuch" in done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_unlocked_is_refused_under_ci(root: Path, ci: str) -> None:
    done = run_cli("run", "loop.local", "--unlocked", cwd=root, env={"CI": ci})
    assert done.code == 2
    assert done.stderr.splitlines()[0] == ("wfops: error: --unlocked is refused when CI is set: CI runs what "
                                           "wfops.lock records")
    assert run_cli("runs", "list", "--json", cwd=root).json() == []
    assert run_cli("run", "loop.local", "--unlocked", cwd=root, env={"CI": "false"}).code == 0


def test_last_wherever_a_run_id_is_taken(root: Path) -> None:
    assert run_cli("runs", "show", "last", cwd=root).stderr.startswith("wfops: error: no run 'last'")
    first = run_cli("run", "loop.local", "--json", cwd=root).json()["run_id"]
    second = run_cli("run", "other.local", "--json", cwd=root).json()["run_id"]
    assert run_cli("runs", "show", "last", "--json", cwd=root).json()["run_id"] == second
    assert run_cli("runs", "show", "last:loop.local", "--json", cwd=root).json()["run_id"] == first
    assert [e["seq"] for e in run_cli("runs", "trace", "last:other.local", "--json", cwd=root).json()] == [1, 2]
    missing = run_cli("runs", "trace", "last:nope", cwd=root)
    assert missing.code != 0 and "nope" in missing.stderr and "Traceback" not in missing.stderr
    removed = run_cli("runs", "rm", "last", cwd=root)
    assert removed.stdout == f"removed run {second}\n"


def test_runs_list_filters(root: Path) -> None:
    run_cli("run", "loop.local", cwd=root)
    deployment = root / "deployments" / "loop.local.yaml"
    deployment.write_text(deployment.read_text().replace("[1, 2, 3]", "[1, -2, 3]"))
    assert run_cli("compile", cwd=root).code == 0
    failed = run_cli("run", "loop.local", "--json", cwd=root).json()["run_id"]
    run_cli("run", "other.local", cwd=root)

    def ids(*args: str) -> list[str]:
        return [r["run_id"] for r in run_cli("runs", "list", "--json", *args, cwd=root).json()]

    assert len(ids()) == 3
    assert ids("--status", "failed") == [failed]
    assert len(ids("--deployment", "loop.local")) == 2
    assert ids("--deployment", "loop.local", "--status", "failed", "--since", "1h", "--limit", "1") == [failed]
    assert ids("--since", "2099-01-01") == []
    assert len(ids("--since", "2000-01-01T00:00")) == 3
    empty = run_cli("runs", "list", "--status", "cancelled", "--since", "2h", cwd=root)
    assert empty.stdout == "no `cancelled` runs since 2h\n"
    bad = run_cli("runs", "list", "--since", "yesterday", cwd=root)
    assert bad.code == 2 and bad.stderr.startswith("wfops: error: --since 'yesterday': write an age")


def test_since_stamps() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert since_stamp("2h", now) == "2026-03-01T10:00:00.000000Z"
    assert since_stamp("90m", now) == "2026-03-01T10:30:00.000000Z"
    assert since_stamp("1w", now) == "2026-02-22T12:00:00.000000Z"
    assert since_stamp("2026-01-31") == "2026-01-31T00:00:00.000000Z"
    assert since_stamp("2026-01-31T10:00+02:00") == "2026-01-31T08:00:00.000000Z"
    with pytest.raises(UsageError):
        since_stamp("2 fortnights")


def test_the_run_object_is_complete_and_in_its_declared_order(root: Path) -> None:
    ran = run_cli("run", "loop.local", "--json", cwd=root).json()
    assert list(ran) == list(RUN_KEYS)
    assert ran["steps"] == 4 and ran["orphaned"] is False and ran["unlocked"] is False
    assert ran["started_at"] <= ran["ended_at"] and isinstance(ran["duration_ms"], int)
    [listed] = run_cli("runs", "list", "--json", cwd=root).json()
    assert listed == ran
    shown = run_cli("runs", "show", ran["run_id"], "--json", cwd=root).json()
    assert list(shown) == [*RUN_KEYS, "input", "state"]
    assert {k: shown[k] for k in RUN_KEYS} == ran


def test_watch_reruns_the_working_tree_with_unlocked(root: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.delenv("CI", raising=False)  # the dev loop is a developer's, refused under CI

    from wfops.cli.watch_cmd import one_pass

    _edit_description(root)  # the lock is stale now
    out = io.StringIO()
    assert one_pass(root, {"workflows/loop.yaml"}, deployment="loop.local", stream=out) is True
    assert "refused" in out.getvalue()
    out = io.StringIO()
    assert one_pass(root, {"workflows/loop.yaml"}, deployment="loop.local", stream=out, unlocked=True) is True
    assert "run of loop.local exited 0" in out.getvalue()
