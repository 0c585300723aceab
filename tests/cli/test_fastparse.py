"""The command table: generated from the typer app, parsing as typer would, and taken.

The app (`wfops/cli/app.py`) is the one declaration of the command line; `argtable.py` is
written from it by `wfops.cli.tablegen`. These tests keep the two in step (regenerate and
compare, also for a scratch copy of the app with a change that matters), check that each
plain form becomes the call typer would make, and that a plain command line really skips
typer.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.harness import process_env, run_cli
from wfops.cli import app as cli_app
from wfops.cli import fastparse, tablegen
from wfops.cli.argtable import TABLE
from wfops.cli.fastparse import VerbCall

APP_SOURCE = Path(cli_app.__file__).read_text(encoding="utf-8")
COMMITTED = Path(fastparse.__file__).with_name("argtable.py").read_text(encoding="utf-8")

PLAIN = [
    ["run", "hello.local"],
    ["run", "hello.local", "--json", "-i", "a=1", "--input", "b=x", "--input-file=f.json", "--db", "x.db"],
    ["run", "--project", "p", "hello.local", "-i", "-5"],
    ["run", "d", "--project", ""],
    ["resume", "r1", "--outcome", "ok", "--payload", "{}"],
    ["cancel", "r1", "--json"],
    ["runs", "list"],
    ["runs", "list", "--limit", "3", "--status", "failed", "--json"],
    ["runs", "list", "--limit=7", "--deployment", "d"],
    ["runs", "list", "--since", "2h", "--status", "failed"],
    ["run", "hello.local", "--unlocked"],
    ["runs", "show", "r1", "--db", "x.db"],
    ["runs", "trace", "r1", "--from", "2"],
    ["runs", "logs", "last", "each", "--json"],
    ["runs", "logs", "r1"],
    ["runs", "trace", "r1", "--from", "0", "--limit", "1"],
    ["runs", "fork", "r1", "--from", "s2", "-i", "a=1"],
    ["runs", "prune", "--older-than", "1.5"],
    ["runs", "prune", "--older-than", "-0", "--db", "-"],
    ["runs", "rm", "r1"],
    ["runs", "copy", "--to", "postgresql://h/db"],
    ["run", "d", "--no-cache"],
    ["cache", "list", "--deployment", "d", "--older-than", "7d", "--json"],
    ["cache", "show", "abc123"],
    ["cache", "clear", "--older-than", "1h"],
    ["runs", "list", "--scheduled"],
    ["schedule", "tick", "--at", "2026-12-01T10:05:00Z", "--json"],
    ["schedule", "tick", "--dry-run"],
    ["schedule", "list", "-n", "2"],
    ["schedule", "next", "d", "--count", "1", "--at", "2026-12-01T10:05:00+01:00"],
    ["ci", "schedule"],
    ["caps", "list", "--source", "std"],
    ["caps", "show", "std.echo", "--json"],
    ["caps", "call", "std.echo", "--input-file", "in.json"],
    ["init", "dir", "--force"],
    ["init", "--no-force"],
    ["validate"],
    ["validate", "a.yaml", "--format", "json", "b.yaml"],
    ["validate", "-f", "github", "--project=/p"],
    ["validate", "--format=sarif", "--project", "x"],
    ["test", "a", "b", "-k", "x", "-o", "out.xml", "-f", "junit"],
    ["check", "--live", "--format", "json"],
    ["compile", "--out", "build"],
    ["schema", "--kind", "deployment"],
    ["ui"],
    ["ui", "--host", "0.0.0.0", "--port", "0", "--db", "x.db", "--read-only", "--open"],
    ["graph", "wf", "-f", "dot"],
    ["watch", "--run", "d"],
    ["mcp", "--db", "x.db"],
    ["mcp", "--allow-client-sources"],
    ["mcp", "--http", "--host", "127.0.0.1", "--port", "9000"],
    ["sources", "list", "--json"],
    ["sources", "approve", "evil", "--project", "p"],
]

TYPER_DECIDES = [
    [], ["--help"], ["run", "--help"], ["run", "-h"], ["run"], ["run", "a", "b"], ["run", "a", "--nope"],
    ["runs", "list", "--limit", "0"], ["runs", "list", "--limit", "x"], ["runs", "list", "--limit"],
    ["runs"], ["runs", "nope"], ["nope"], ["caps", "call", "std.echo"], ["run", "a", "--json=1"],
    ["--version"], ["run", "a", "--", "b"], ["runs", "prune", "--older-than", "nan"],
    ["runs", "list", "--limit", " 5"], ["runs", "list", "--limit", "+5"], ["runs", "list", "--limit", "1_0"],
    ["runs", "list", "--limit", "\u0665"], ["runs", "prune", "--older-than", "1e3"], ["run", "a", "-i=x"],
    ["test", "-fjson"], ["validate", "--help"], ["validate", "--format"], ["validate", "-fjson"],
    ["validate", "--bogus"],
]


def through_typer(argv: list[str]) -> Any:
    """What the app's command returns when typer parses `argv`."""
    return cli_app.app(args=argv, standalone_mode=False, prog_name="wfops")


@pytest.mark.parametrize("argv", PLAIN, ids=[" ".join(a) for a in PLAIN])
def test_plain_forms_become_the_call_typer_makes(argv: list[str]) -> None:
    expected = through_typer(argv)
    assert isinstance(expected, VerbCall)
    assert fastparse.parse(argv) == expected


def test_every_command_has_a_plain_form_above() -> None:
    assert {key for key, _info in tablegen.commands(cli_app.app)} == {
        " ".join(argv[:2]) if " ".join(argv[:2]) in TABLE else argv[0] for argv in PLAIN}


@pytest.mark.parametrize("argv", TYPER_DECIDES, ids=[" ".join(a) or "(none)" for a in TYPER_DECIDES])
def test_everything_else_is_left_to_typer(argv: list[str]) -> None:
    assert fastparse.parse(argv) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastparse.parse(["runs", "list"]) is not None
    monkeypatch.setenv("_WFOPS_COMPLETE", "bash_complete")
    assert fastparse.parse(["runs", "list"]) is None


def test_a_default_the_verb_changes_is_not_the_tables() -> None:
    first = fastparse.parse(["validate"])
    assert first is not None
    first.kwargs["paths"].append("x")
    second = fastparse.parse(["validate"])
    assert second is not None and second.kwargs["paths"] == []


def test_typers_own_errors_and_help_stay_typers() -> None:
    helped = run_cli("validate", "--help")
    assert helped.code == 0 and "--format" in helped.stdout
    missing = run_cli("validate", "--format")
    assert missing.code == 2 and missing.stderr.startswith("wfops: error:")
    low = run_cli("runs", "list", "--limit", "0")
    assert low.code == 2 and "--limit" in low.stderr


# The drift test: the committed table is what the generator writes for the app as it is.


def test_the_table_is_generated_from_the_app() -> None:
    assert tablegen.generate() == COMMITTED, "regenerate it: python -m wfops.cli.tablegen > wfops/cli/argtable.py"


def test_every_command_is_in_the_table() -> None:
    # A command the table cannot parse is written as a comment (typer would parse it, slowly).
    assert "parsed by typer" not in COMMITTED
    assert set(TABLE) == {key for key, _info in tablegen.commands(cli_app.app)}


def scratch_app(tmp_path: Path, old: str, new: str) -> ModuleType:
    """The app module with one edit, loaded from a scratch copy."""
    assert APP_SOURCE.count(old) == 1, old
    path = tmp_path / "scratch_app.py"
    path.write_text(APP_SOURCE.replace(old, new), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("scratch_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table_of(module: ModuleType) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(tablegen.generate(module.app), namespace)  # noqa: S102 - the generated module, as imported
    table: dict[str, Any] = namespace["TABLE"]
    return table


RUNS_LIST = '''              status: Annotated[str | None, typer.Option("--status")] = None,
              limit: Annotated[int, typer.Option("--limit", min=1)] = 20,'''
RUNS_LIST_CALL = "status=status, limit=limit,"

CHANGES = {
    "an option added": (RUNS_LIST, RUNS_LIST + '\n              until: Annotated[str | None, typer.Option("--until")] = None,',
                        lambda t: "until" in {p["name"] for p in t["runs list"]["params"]}),
    "an option's type": (RUNS_LIST, RUNS_LIST.replace("limit: Annotated[int,", "limit: Annotated[float,"),
                         lambda t: t["runs list"]["params"][2]["type"] == "float"),
    "an option's bound": (RUNS_LIST, RUNS_LIST.replace("min=1", "min=2"),
                          lambda t: t["runs list"]["params"][2]["min"] == 2),
    "an option's name": (RUNS_LIST, RUNS_LIST.replace('"--status"', '"--status", "-s"'),
                         lambda t: t["runs list"]["params"][1]["opts"] == ["--status", "-s"]),
    "a default": (RUNS_LIST, RUNS_LIST.replace("= 20,", "= 50,"),
                  lambda t: {"kwarg": "limit", "param": "limit", "absent": 50} in t["runs list"]["verb"]["args"]),
    "a computed value": (RUNS_LIST_CALL, "status=status, limit=limit or 20,", lambda t: "runs list" not in t),
    "an environment variable": (RUNS_LIST, RUNS_LIST.replace('"--status")', '"--status", envvar="S")'),
                                lambda t: "runs list" not in t),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_to_the_app_fails_the_drift_test_until_regenerated(tmp_path: Path, change: str) -> None:
    old, new, seen = CHANGES[change]
    changed = scratch_app(tmp_path, old, new)
    assert tablegen.generate(changed.app) != COMMITTED  # the drift test above would fail
    table = table_of(changed)
    assert seen(table)  # and the regenerated table says what changed
    # typer itself sees the same change (the scratch copy is a real app)
    assert isinstance(changed.app(args=["runs", "list"], standalone_mode=False, prog_name="wfops"), VerbCall)


def test_the_unchanged_scratch_copy_passes_the_drift_test(tmp_path: Path) -> None:
    # The scratch route itself does not make a difference: the changes above are what the test sees.
    assert tablegen.generate(scratch_app(tmp_path, RUNS_LIST, RUNS_LIST).app) == COMMITTED


def test_a_computed_value_is_caught_even_when_it_looks_like_a_default(tmp_path: Path) -> None:
    changed = scratch_app(tmp_path, RUNS_LIST_CALL, "status=status, limit=limit or 20,")
    assert "'runs list': parsed by typer: limit: not the value typer gives for limit" in tablegen.generate(changed.app)


def test_an_option_of_the_app_itself_is_refused(tmp_path: Path) -> None:
    # The table starts at the command: a root option that is not eager (as --version is) would be
    # skipped by every command line the table parses.
    changed = scratch_app(tmp_path, "callback=_print_version, is_eager=True,", "callback=_print_version,")
    with pytest.raises(tablegen.Unsupported, match="app's callback takes 'version'"):
        tablegen.generate(changed.app)


# Proven taken: a plain command line in a fresh process never imports typer.

PROBE = """
import json, sys
from wfops.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert exc.code == 0, exc.code
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'ruamel', 'jsonschema', 'mcp',
                                                                   'rich', 'typer'})))
"""


def heavy_loaded(argv: list[str], cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True,
                          env=process_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


@pytest.mark.slow
def test_a_plain_runs_list_imports_neither_typer_nor_pydantic(tmp_path: Path) -> None:
    (tmp_path / "sources.yaml").write_text("sources: {}\n")
    assert heavy_loaded(["runs", "list", "--limit", "5"], tmp_path) == []
    # the probe sees typer when typer parses: a form the table leaves to it (a number with a sign)
    assert "typer" in heavy_loaded(["runs", "list", "--limit", "+5"], tmp_path)
