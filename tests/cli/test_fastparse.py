"""The command table: made from the typer app, and parsing as typer would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness import process_env
from wfops.cli import fastparse

PLAIN = [
    ["run", "hello.local"],
    ["run", "hello.local", "--json", "-i", "a=1", "--input", "b=x", "--input-file=f.json", "--db", "x.db"],
    ["run", "--project", "p", "hello.local", "-i", "-5"],
    ["resume", "r1", "--outcome", "ok", "--payload", "{}"],
    ["runs", "list"],
    ["runs", "list", "--limit", "3", "--status", "failed", "--json"],
    ["runs", "list", "--limit=7", "--deployment", "d"],
    ["runs", "trace", "r1", "--from", "2"],
    ["runs", "prune", "--older-than", "1.5"],
    ["runs", "prune", "--older-than", "-0", "--db", "-"],
    ["runs", "rm", "r1"],
    ["caps", "call", "std.echo", "--input-file", "in.json"],
    ["init", "dir", "--force"],
    ["init", "--no-force"],
    ["test", "a", "b", "-k", "x", "-o", "out.xml", "-f", "junit"],
    ["check", "--live", "--format", "json"],
    ["compile"],
    ["schema", "--kind", "deployment"],
    ["graph", "wf", "-f", "dot"],
]

TYPER_DECIDES = [
    [], ["--help"], ["run", "--help"], ["run"], ["run", "a", "b"], ["run", "a", "--nope"],
    ["runs", "list", "--limit", "0"], ["runs", "list", "--limit", "x"], ["runs", "list", "--limit"],
    ["runs"], ["runs", "nope"], ["nope"], ["caps", "call", "std.echo"], ["run", "a", "--json=1"],
    ["--version"], ["run", "a", "--", "b"], ["runs", "prune", "--older-than", "nan"],
    ["runs", "list", "--limit", " 5"], ["runs", "list", "--limit", "+5"], ["runs", "list", "--limit", "1_0"],
    ["runs", "prune", "--older-than", "1e3"], ["run", "a", "-i=x"], ["test", "-fjson"],
]


# Regenerating the table reads typer's parameter descriptors, which the oldest typer wfops
# allows (the floors lane) lacks; the committed table is still checked there, call by call,
# against typer's own parsing by the tests below.
def test_the_table_is_made_from_the_app() -> None:
    path = Path(fastparse.__file__).with_name("argtable.py")
    try:
        generated = fastparse.generate()
    except AttributeError as exc:
        if "type_descriptor" not in str(exc):
            raise
        pytest.skip("regenerating the table needs a typer with parameter descriptors (the floors lane runs "
                    "the oldest typer)")
    assert path.read_text(encoding="utf-8") == generated, \
        "regenerate it: python -m wfops.cli.fastparse > wfops/cli/argtable.py"


def calls_through_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, dict[str, Any]]:
    """What the app's command hands to its verb module when typer parses `argv`."""
    import typer

    from wfops.cli import app as cli_app

    seen: list[tuple[str, str, dict[str, Any]]] = []

    def record(verb: str, function: str = "run", **kwargs: Any) -> None:
        seen.append((verb, function, kwargs))
        raise typer.Exit(0)

    monkeypatch.setattr(cli_app, "_call", record)
    cli_app.app(args=argv, standalone_mode=False, prog_name="wfops")
    assert len(seen) == 1
    return seen[0]


def calls_through_table(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, dict[str, Any]]:
    """What the table route hands to the verb module (no typer import on this route)."""
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def record(module: str, function: str, kwargs: dict[str, Any]) -> int:
        seen.append((module, function, kwargs))
        return 0

    monkeypatch.setattr(fastparse, "_invoke", record)
    assert fastparse.fast_command(argv) == 0
    assert len(seen) == 1
    return seen[0]


def calls_through_the_app_function(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, dict[str, Any]]:
    """The route for a command that does more than pass its values on: its app function is called."""
    import typer

    from wfops.cli import app as cli_app
    from wfops.cli.argtable import TABLE

    key = " ".join(argv[:2]) if " ".join(argv[:2]) in TABLE else argv[0]
    monkeypatch.setitem(TABLE, key, {**TABLE[key], "verb": None})
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def record(verb: str, function: str = "run", **kwargs: Any) -> None:
        seen.append((verb, function, kwargs))
        raise typer.Exit(0)

    monkeypatch.setattr(cli_app, "_call", record)
    assert fastparse.fast_command(argv) == 0
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("argv", PLAIN, ids=[" ".join(a) for a in PLAIN])
def test_plain_forms_reach_the_verb_with_what_typer_gives(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastparse.parse(argv) is not None
    expected = calls_through_typer(argv, monkeypatch)
    assert calls_through_table(argv, monkeypatch) == expected
    assert calls_through_the_app_function(argv, monkeypatch) == expected


@pytest.mark.parametrize("argv", TYPER_DECIDES, ids=[" ".join(a) or "(none)" for a in TYPER_DECIDES])
def test_everything_else_is_left_to_typer(argv: list[str]) -> None:
    assert fastparse.parse(argv) is None


@pytest.mark.slow
def test_runs_list_imports_neither_typer_nor_pydantic(tmp_path: Path) -> None:
    (tmp_path / "sources.yaml").write_text("sources: {}\n")
    script = ("import sys\nfrom wfops.cli.main import main\ntry:\n    main(['runs', 'list', '--limit', '5'])\n"
              "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
              "import json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
              "{'pydantic', 'ruamel', 'jsonschema', 'mcp', 'rich', 'typer'})))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env=process_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastparse.parse(["runs", "list"]) is not None
    monkeypatch.setenv("_WFOPS_COMPLETE", "bash_complete")
    assert fastparse.parse(["runs", "list"]) is None
