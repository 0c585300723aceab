"""The step cache end to end: real projects, real runs, a real SQLite store.

The node in `tests/cache/project.py` appends a line to a log file each time its body runs,
so "served from the cache" is counted from what the capability did, not from the trace."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cache.project import calls, db_of, make_cache_project, run_json, trace
from tests.conftest import write
from tests.runner.helpers import env_for, wfops

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_cache_project(tmp_path / "proj")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "calls.log"


def _hit(entry: dict) -> bool:
    return entry.get("cached") is True


def test_a_second_run_with_the_same_input_is_served_from_the_cache(root: Path, log: Path) -> None:
    first = run_json(root, "cached.local", log=log)
    second = run_json(root, "cached.local", log=log)
    assert first["status"] == second["status"] == "completed"
    assert second["output"] == first["output"] == {"text": "HI"}
    assert [c["node"] for c in calls(log)] == ["slow"]  # the body ran once
    work, tail = trace(root, second["run_id"])
    assert _hit(work) and not _hit(tail)
    assert work["cached_from"]["run_id"] == first["run_id"]
    assert work["cached_from"]["step"] == "work" and work["cached_from"]["seq"] == 1
    assert work["cached_from"]["saved"] >= 0
    assert work["state_changes"] == [{"path": "state.text", "value": "HI"}]
    assert not any(_hit(e) for e in trace(root, first["run_id"]))
    text = wfops(root, "runs", "trace", second["run_id"])
    assert f"cached from {first['run_id']} work#1" in text.stdout


def test_no_cache_runs_every_step(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    again = run_json(root, "cached.local", "--no-cache", log=log)
    assert len(calls(log)) == 2
    assert not any(_hit(e) for e in trace(root, again["run_id"]))


def test_a_changed_input_misses(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    other = run_json(root, "cached.local", "--input", "text=other", log=log)
    assert [c["text"] for c in calls(log)] == ["hi", "other"]
    assert other["output"] == {"text": "OTHER"}
    run_json(root, "cached.local", "--input", "text=other", log=log)
    assert len(calls(log)) == 2  # and each input has its own entry


def test_a_changed_node_body_misses(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    ops = root / "ops.py"
    ops.write_text(ops.read_text().replace("return Out(text=shout(payload.text))",
                                           "return Out(text=shout(payload.text) + '!')"))
    changed = run_json(root, "cached.local", log=log)
    assert changed["output"] == {"text": "HI!"} and len(calls(log)) == 2


def test_a_changed_project_module_the_node_uses_misses(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    (root / "helper.py").write_text("def shout(text: str) -> str:\n    return text.upper() + '?'\n")
    changed = run_json(root, "cached.local", log=log)
    assert changed["output"] == {"text": "HI?"} and len(calls(log)) == 2


def test_a_contract_changed_by_compile_misses(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    before = {row[0] for row in db_of(root).execute("SELECT contract FROM step_cache")}
    ops = root / "ops.py"
    ops.write_text(ops.read_text().replace("class Out(BaseModel):\n    text: str",
                                           "class Out(BaseModel):\n    text: str\n    note: str = ''"))
    assert wfops(root, "compile").returncode == 0
    run_json(root, "cached.local", log=log)
    assert len(calls(log)) == 2
    after = {row[0] for row in db_of(root).execute("SELECT contract FROM step_cache")}
    assert len(after - before) == 1  # the new contract's entry, beside the old one


def test_a_changed_cache_key_misses(root: Path, log: Path) -> None:
    # `keyed` passes only `text` to the node: `date` reaches the key through `cache.key` alone.
    run_json(root, "keyed.local", log=log)
    run_json(root, "keyed.local", log=log)
    assert len(calls(log)) == 1
    run_json(root, "keyed.local", "--input", "date=d2", log=log)
    assert len(calls(log)) == 2


def test_an_expired_ttl_misses(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    with db_of(root) as db:  # the entry made two days ago: past the step's `ttl: 1d`
        db.execute("UPDATE step_cache SET created_at = '2000-01-01T00:00:00.000000Z'")
    run_json(root, "cached.local", log=log)
    assert len(calls(log)) == 2
    run_json(root, "cached.local", log=log)
    assert len(calls(log)) == 2  # the fresh result replaced it


def test_a_failed_call_is_not_cached(root: Path, log: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fail-now"
    marker.write_text("")
    failed = run_json(root, "flaky.local", log=log, WFOPS_TEST_FAIL=str(marker))
    assert failed["status"] == "failed"
    assert db_of(root).execute("SELECT count(*) FROM step_cache").fetchone()[0] == 0
    marker.unlink()
    done = run_json(root, "flaky.local", log=log, WFOPS_TEST_FAIL=str(marker))
    assert done["status"] == "completed" and len(calls(log)) == 2
    run_json(root, "flaky.local", log=log, WFOPS_TEST_FAIL=str(marker))
    assert len(calls(log)) == 2


def test_a_redriven_run_is_served_what_its_failed_step_needs(root: Path, log: Path, tmp_path: Path) -> None:
    """A redrive treats a cached step as done: only the failed step runs again."""
    marker = tmp_path / "fail-now"
    run_json(root, "flaky.local", log=log, WFOPS_TEST_FAIL=str(marker))  # caches `work`
    marker.write_text("")
    failed = run_json(root, "flaky.local", "--input", "text=new", log=log, WFOPS_TEST_FAIL=str(marker))
    assert failed["status"] == "failed"
    marker.unlink()
    done = wfops(root, "resume", failed["run_id"], "--json",
                 env=env_for(WFOPS_TEST_LOG=str(log), WFOPS_TEST_FAIL=str(marker)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c["text"] for c in calls(log)] == ["hi", "new", "new"]


def test_a_capability_default_caches_and_a_step_can_turn_it_off(root: Path, log: Path) -> None:
    run_json(root, "default.local", log=log)
    second = run_json(root, "default.local", log=log)
    assert len(calls(log)) == 1 and _hit(trace(root, second["run_id"])[0])
    run_json(root, "off.local", log=log)
    run_json(root, "off.local", log=log)
    assert len(calls(log)) == 3


def test_a_bad_cache_default_is_a_node_definition_error(root: Path) -> None:
    ops = root / "ops.py"
    ops.write_text(ops.read_text().replace('@wfops.node(cache="1h")', '@wfops.node(cache="soon")'))
    done = wfops(root, "validate")
    assert done.returncode == 1
    assert "`cache` must be True, False or a ttl" in done.stdout + done.stderr


def test_cache_list_show_and_clear(root: Path, log: Path) -> None:
    first = run_json(root, "cached.local", log=log)
    run_json(root, "keyed.local", log=log)
    listed = wfops(root, "cache", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)
    assert {e["deployment"] for e in entries} == {"cached.local", "keyed.local"}
    mine = next(e for e in entries if e["deployment"] == "cached.local")
    assert mine["capability"] == "ops.slow" and mine["origin"] == {"run_id": first["run_id"], "step": "work",
                                                                   "seq": 1}
    shown = wfops(root, "cache", "show", mine["key"][:10], "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["output"] == {"text": "HI"}
    assert wfops(root, "cache", "show", "ffffffffff").returncode == 2
    assert wfops(root, "cache", "list", "--older-than", "soon").returncode == 2
    assert "ops.slow" in wfops(root, "cache", "list").stdout
    assert json.loads(wfops(root, "cache", "list", "--older-than", "1d", "--json").stdout) == []
    cleared = wfops(root, "cache", "clear", "--deployment", "keyed.local")
    assert cleared.returncode == 0 and "cleared 1 cache entry" in cleared.stdout
    assert [e["deployment"] for e in json.loads(wfops(root, "cache", "list", "--json").stdout)] == ["cached.local"]
    run_json(root, "keyed.local", log=log)
    assert len(calls(log)) == 3  # cleared: the call ran again


def test_prune_keeps_an_entry_a_live_run_was_served_from(root: Path, log: Path) -> None:
    run_json(root, "cached.local", log=log)
    served = run_json(root, "cached.local", log=log)
    with db_of(root) as db:  # everything is old; the run that was served is live (crashed mid-run)
        db.execute("UPDATE step_cache SET created_at = '2000-01-01T00:00:00.000000Z'")
        db.execute("UPDATE runs SET status = 'running' WHERE id = ?", (served["run_id"],))
    assert wfops(root, "runs", "prune", "--older-than", "0").returncode == 0
    assert db_of(root).execute("SELECT count(*) FROM step_cache").fetchone()[0] == 1
    with db_of(root) as db:
        db.execute("UPDATE runs SET status = 'completed' WHERE id = ?", (served["run_id"],))
    assert wfops(root, "runs", "prune", "--older-than", "0").returncode == 0
    assert db_of(root).execute("SELECT count(*) FROM step_cache").fetchone()[0] == 0


def test_the_size_limit_pushes_out_the_least_recently_used(root: Path, log: Path) -> None:
    env = {"WFOPS_CACHE_MAX_BYTES": "30"}  # room for one output ({"text":"HI"} is 13 bytes) ... two
    for text in ("a", "b", "c"):
        run_json(root, "cached.local", "--input", f"text={text}", log=log, **env)
    kept = [r[0] for r in db_of(root).execute("SELECT output FROM step_cache ORDER BY created_at")]
    assert kept == ['{"text":"B"}', '{"text":"C"}']


def test_a_wftest_mock_is_never_cached(root: Path, log: Path) -> None:
    write(root, {"tests/cached.wftest.yaml": """
        workflow: cached
        cases:
          - name: mocked
            input: {text: hi}
            mocks:
              ops.slow: {output: {text: MOCKED}}
            expect: {status: completed, output: {text: MOCKED}}
        """})
    done = wfops(root, "test", "--no-cache")
    assert done.returncode == 0, done.stdout + done.stderr
    real = run_json(root, "cached.local", log=log)
    assert real["output"] == {"text": "HI"} and len(calls(log)) == 1


def test_the_step_summary_and_the_graph_show_cached_steps(root: Path, log: Path, tmp_path: Path) -> None:
    run_json(root, "cached.local", log=log)
    summary = tmp_path / "summary.md"
    done = wfops(root, "run", "cached.local", env=env_for(WFOPS_TEST_LOG=str(log), GITHUB_STEP_SUMMARY=str(summary)))
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert "| Cached | 1 step (`work`), saved " in text
    assert "classDef cached" in text
    assert "cached" in wfops(root, "graph", "cached").stdout  # the step declares `cache:`


def mcp_sources(log: Path) -> str:
    """The project's python source and the annotated MCP server, which logs its calls to `log`."""
    return f"""
sources:
  ops: {{kind: python, module: ops}}
  tools:
    kind: mcp
    command: [{sys.executable}, {Path(__file__).parent / 'servers' / 'annotated.py'}, {log}]
    tools:
      lookup: {{cache: 1h}}
      plain: {{cache: 1h}}
"""


def _mcp_step(uses: str, cache: str) -> str:
    return f"""
name: mcp-{uses.split('.')[1]}
steps:
  - id: work
    uses: {uses}
    with: {{text: hi}}
    cache: {cache}
    next: end
"""


@pytest.mark.slow
def test_a_destructive_capability_with_cache_is_a_validate_error(root: Path, log: Path) -> None:
    write(root, {"sources.yaml": mcp_sources(log), "workflows/wipe.yaml": _mcp_step("tools.wipe", "true")})
    done = wfops(root, "compile")
    assert done.returncode == 1
    assert "error[cache-side-effects]" in done.stdout and "workflows/wipe.yaml" in done.stdout
    assert "warning[cache-not-read-only]" in done.stdout  # `plain` says nothing of its effects


@pytest.mark.slow
def test_a_read_only_tool_takes_its_default_from_sources_yaml(root: Path, log: Path) -> None:
    write(root, {"sources.yaml": mcp_sources(log), "workflows/lookup.yaml": _mcp_step("tools.lookup", "null"),
                 "workflows/plain.yaml": _mcp_step("tools.plain", "null"),
                 "deployments/lookup.yaml": "name: lookup.local\nworkflow: mcp-lookup\n",
                 "deployments/plain.yaml": "name: plain.local\nworkflow: mcp-plain\n"})
    assert wfops(root, "compile").returncode == 0
    for _ in range(2):
        run_json(root, "lookup.local", log=log)
        run_json(root, "plain.local", log=log)
    assert [c["node"] for c in calls(log)] == ["lookup", "plain", "plain"]


def test_read_trace_of_the_mcp_server_shows_the_cached_step(root: Path, log: Path) -> None:
    from wfops.api import Project
    from wfops.mcpserver import operations

    first = run_json(root, "cached.local", log=log)
    second = run_json(root, "cached.local", log=log)
    result = operations.read_trace(Project(root), second["run_id"], None, None)
    work = result.model_dump()["entries"][0]
    assert work["cached"] is True and work["cached_from"]["run_id"] == first["run_id"]
    assert result.model_dump()["entries"][1]["cached"] is False


def test_a_fork_keeps_the_cached_marks_of_the_steps_it_copies(root: Path, log: Path) -> None:
    first = run_json(root, "cached.local", log=log)
    served = run_json(root, "cached.local", log=log)
    done = wfops(root, "runs", "fork", served["run_id"], "--from", "tail", "--json",
                 env=env_for(WFOPS_TEST_LOG=str(log)))
    assert done.returncode == 0, done.stdout + done.stderr
    forked = json.loads(done.stdout)
    work = trace(root, forked["run_id"])[0]
    assert work["cached_from"]["run_id"] == first["run_id"] and len(calls(log)) == 1


@pytest.mark.parametrize("variable", ["WFOPS_CACHE_MAX_AGE", "WFOPS_CACHE_MAX_BYTES"])
def test_a_bad_limit_is_a_usage_error_before_the_run_starts(root: Path, log: Path, variable: str) -> None:
    done = wfops(root, "run", "cached.local", env=env_for(WFOPS_TEST_LOG=str(log), **{variable: "lots"}))
    assert done.returncode == 2 and variable in done.stderr and "Traceback" not in done.stderr
    assert calls(log) == [] and wfops(root, "runs", "list", "--json").stdout.strip() == "[]"


def test_reading_the_cache_never_creates_a_store(root: Path) -> None:
    assert wfops(root, "cache", "list").stdout.strip() == "the step cache is empty"
    assert wfops(root, "cache", "show", "abcdef").returncode == 2
    assert "cleared 0 cache entries" in wfops(root, "cache", "clear").stdout
    assert not (root / ".wfops" / "wfops.db").exists()
