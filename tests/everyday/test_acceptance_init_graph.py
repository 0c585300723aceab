"""Acceptance, as a new user meets it: `wfops init` in awkward places, its next steps,
and `wfops graph` drawing every step and route in both formats with safe labels."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import write
from tests.harness import run_cli


def test_init_where_a_file_is_in_the_way_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the project folder's parent should be\n")
    proc = run_cli("init", "blocked/inner", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.stderr.startswith("wfops: error: blocked is a file where the project needs a folder")


def test_init_with_an_empty_directory_argument_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("init", "", cwd=tmp_path)
    assert proc.returncode == 2 and "directory is empty" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was written into the current directory


def test_init_outside_git_says_git_init_before_pre_commit(tmp_path: Path) -> None:
    proc = run_cli("init", "my flows", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("#")[0].strip() for line in proc.stdout.splitlines()]
    assert "cd 'my flows'" in lines  # copy-pastable into a shell
    assert lines.index("git init") < lines.index("pre-commit install")

    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    inside = run_cli("init", ".", cwd=tmp_path / "repo")
    assert inside.returncode == 0 and "git init" not in inside.stdout


def test_the_fresh_scaffold_validates_compiles_checks_and_runs(tmp_path: Path) -> None:
    assert run_cli("init", "p", cwd=tmp_path).returncode == 0
    root = tmp_path / "p"
    for args in (("validate",), ("compile",), ("check",), ("run", "hello.local", "--input", "name=you")):
        proc = run_cli(*args, cwd=root)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    assert "Hello, you!" in proc.stdout


ALL_KINDS = """
name: all
input: {type: object, properties: {xs: {type: array}}}
state:
  n: {type: string}
  out: {type: array}
  err: {type: object}
start: first
steps:
  - {id: unreached, uses: std.echo, with: {value: 1}, next: end}
  - id: first
    if: {eq: [$state.n, "#9829; <b> & | \\"q\\""]}
    then: loop
    else: sub
  - {id: sub, workflow: child, on: {ok: loop, bad: ask}}
  - {id: loop, foreach: $input.xs, uses: std.echo, with: {value: $item}, save: state.out, next: ask}
  - {id: ask, interrupt: approval, request: {q: 1}, on: {yes: risky, no: stop}}
  - id: risky
    uses: std.fail
    with: {message: no}
    catch: {next: stop, save: state.err}
    next: end
  - {id: stop, end: rejected}
"""

CHILD = """
name: child
steps:
  - {id: a, if: {eq: [1, 1]}, then: end, else: b}
  - {id: b, end: bad}
"""

ROUTES = [("first", "loop", "then"), ("first", "sub", "else"), ("sub", "loop", "ok"), ("sub", "ask", "bad"),
          ("loop", "ask", "ok"), ("ask", "risky", "yes"), ("ask", "stop", "no"), ("risky", "end", "ok"),
          ("risky", "stop", "catch"), ("unreached", "end", "ok")]


def test_graph_draws_every_step_and_route_in_both_formats(tmp_path: Path) -> None:
    write(tmp_path, {"sources.yaml": "sources: {}\n", "workflows/all.yaml": ALL_KINDS,
                     "workflows/child.yaml": CHILD})
    assert run_cli("validate", cwd=tmp_path).returncode == 0
    steps = ["unreached", "first", "sub", "loop", "ask", "risky", "stop"]
    key = {step: f"s{i}" for i, step in enumerate(steps)} | {"end": "done"}

    mermaid = run_cli("graph", "all", cwd=tmp_path)
    assert mermaid.returncode == 0, mermaid.stderr
    text = mermaid.stdout
    assert text.startswith("flowchart TD")
    assert f"start --> {key['first']}" in text
    for source, target, label in ROUTES:
        arrow = "-.->" if label == "catch" else "-->"
        assert f'{key[source]} {arrow}|"{label}"| {key[target]}' in text, (source, target)
    # `#` escaped first, so the literal "#9829;" is not drawn as a heart; no raw < > | & " in labels
    label = next(line for line in text.splitlines() if line.strip().startswith(key["first"] + "{"))
    assert "#35;9829;" in label and "#lt;b#gt;" in label and "#amp;" in label and "#124;" in label

    dot = run_cli("graph", "all", "--format", "dot", cwd=tmp_path)
    assert dot.returncode == 0, dot.stderr
    for step in steps:
        assert f'{key[step]} [label="{step}\\n' in dot.stdout
    for source, target, label in ROUTES:
        assert f'{key[source]} -> {key[target]} [label="{label}"' in dot.stdout, (source, target)

    assert run_cli("graph", "nope", cwd=tmp_path).returncode == 1
    assert run_cli("graph", "all", "--format", "svg", cwd=tmp_path).returncode == 2
