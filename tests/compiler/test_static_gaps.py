"""Static checks that used to be missing or wrong: a foreach body that waits at an
interrupt, a deployment's own findings in its workflow, rebinding `std`, the hint for a
pinned child workflow, `$input` typos, one routing typo's cascade, a python source that
blocks at import or imports a package that is not installed."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.compiler.test_environments import ALT, SOURCES_WITH_ALT, USES_NOTES
from tests.harness import WFOPS, finishes, process_env, run_cli
from wfops.compiler.validate import validate_project
from wfops.diagnostics import Diagnostic


def found(root: Path, code: str | None = None) -> list[Diagnostic]:
    return [d for d in validate_project(root).diagnostics if code is None or d.code == code]


CHILD_ASKS = """
name: ask-each
steps:
  - id: ask
    interrupt: approval
    on: {approved: end}
"""
LOOP = """
name: loop
input: {type: object, properties: {items: {type: array}}}
steps:
  - id: each
    foreach: $input.items
    workflow: {child}
    next: end
"""


def test_an_interrupt_in_a_foreach_body_is_an_error_at_the_foreach(project) -> None:
    root = project({"workflows/ask-each.yaml": CHILD_ASKS, "workflows/loop.yaml": LOOP.replace("{child}", "ask-each")})
    [d] = found(root, "interrupt-in-foreach")
    assert (d.severity, d.file, d.line, d.step) == ("error", "workflows/loop.yaml", 6, "each")
    assert "`ask-each`" in d.message and "`ask`" in d.message


def test_an_interrupt_two_workflows_down_is_found_and_traced(project) -> None:
    middle = "name: middle\nsteps:\n  - id: run\n    workflow: ask-each\n    next: end\n"
    root = project({"workflows/ask-each.yaml": CHILD_ASKS, "workflows/middle.yaml": middle,
                    "workflows/loop.yaml": LOOP.replace("{child}", "middle")})
    [d] = found(root, "interrupt-in-foreach")
    assert "`middle` -> `ask-each`" in d.message


PARALLEL = """
name: par
steps:
  - id: both
    parallel:
      a:
        - {id: note, uses: std.echo, with: {value: 1}, next: end}
      b:
        - {id: inner, {b_step}, next: end}
    next: end
"""


def test_an_interrupt_in_a_parallel_branch_is_an_error_at_the_branch_step(project) -> None:
    root = project({"workflows/par.yaml": PARALLEL.replace("{b_step}", "interrupt: approval, on: {approved: end}")
                    .replace(", next: end}\n    next", "}\n    next")})
    [d] = found(root, "interrupt-in-parallel")
    # the line is the branch step's; the subject is the top-level step holding the branches
    assert (d.severity, d.file, d.line, d.step) == ("error", "workflows/par.yaml", 8, "both")
    assert "branch `b` of parallel step `both`" in d.message


def test_a_branch_running_a_workflow_that_asks_is_an_error_traced_to_the_interrupt(project) -> None:
    middle = "name: middle\nsteps:\n  - id: run\n    workflow: ask-each\n    next: end\n"
    root = project({"workflows/ask-each.yaml": CHILD_ASKS, "workflows/middle.yaml": middle,
                    "workflows/par.yaml": PARALLEL.replace("{b_step}", "workflow: middle")})
    [d] = found(root, "interrupt-in-parallel")
    assert d.line == 8 and "`middle` -> `ask-each`" in d.message and "`ask`" in d.message


def test_a_foreach_inside_a_branch_is_checked_too(project) -> None:
    root = project({"workflows/ask-each.yaml": CHILD_ASKS,
                    "workflows/par.yaml": PARALLEL.replace("{b_step}", "foreach: $input.items, workflow: ask-each")})
    assert [d.line for d in found(root, "interrupt-in-foreach")] == [8]
    assert found(root, "interrupt-in-parallel") == []


def test_a_foreach_over_a_workflow_without_interrupts_is_fine(project) -> None:
    child = "name: plain\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    next: end\n"
    root = project({"workflows/plain.yaml": child, "workflows/loop.yaml": LOOP.replace("{child}", "plain")})
    assert found(root, "interrupt-in-foreach") == []


def test_validate_a_deployment_file_reports_what_its_bindings_break(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES, "sources.yaml": SOURCES_WITH_ALT, "alt.py": ALT,
                    "deployments/d2.yaml": "name: d2\nworkflow: counter\nbindings: {notes: alt}\n"})
    for _ in range(2):  # computed, then replayed from the validate cache
        done = run_cli("validate", "deployments/d2.yaml", "--format", "json", cwd=root)
        assert done.returncode == 1, done.stdout
        assert [(d["code"], d["file"], d["line"]) for d in done.json()["diagnostics"]] == [
            ("unrouted-outcome", "workflows/counter.yaml", 3)]
    other = run_cli("validate", "sources.yaml", "--format", "json", cwd=root)
    assert other.returncode == 0 and other.json()["diagnostics"] == []


def test_a_deployment_cannot_rebind_std(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES,
                    "deployments/d.yaml": "name: d\nworkflow: counter\nbindings:\n  notes: nodes\n  std: nodes\n"})
    [d] = found(root, "reserved-source-id")
    assert (d.file, d.line, d.column) == ("deployments/d.yaml", 5, 8)
    assert "rebound" in d.message


def test_a_pinned_child_workflow_gets_a_hint_that_does_not_ask_for_a_pin(project) -> None:
    step = "name: parent\nsteps:\n  - id: run\n    workflow: child@sha256:abcd\n    next: end\n"
    root = project({"workflows/parent.yaml": step})
    [d] = found(root, "invalid-value")
    assert d.line == 4 and "deployments" in (d.hint or "")
    assert "write a workflow name, or `name@sha256" not in (d.hint or "")


def test_a_pinned_deployment_workflow_is_accepted(project) -> None:
    root = project({"workflows/counter.yaml": USES_NOTES,
                    "deployments/d.yaml": "name: d\nworkflow: counter@sha256:abcd\nbindings: {notes: nodes}\n"})
    assert [d for d in found(root) if d.file == "deployments/d.yaml"] == []


INPUT_TYPO = """
name: typo
input:
  type: object
  properties: {name: {type: string}}{extra}
steps:
  - id: a
    uses: std.echo
    with: {value: $input.nmae}
    next: end
"""


def test_an_input_typo_is_an_error_when_the_schema_is_closed(project) -> None:
    root = project({"workflows/typo.yaml": INPUT_TYPO.replace("{extra}", "\n  additionalProperties: false")})
    [d] = found(root, "undeclared-input")
    assert (d.severity, d.line) == ("error", 9)
    assert "always null" in d.message and "`name`" in (d.hint or "")


def test_an_input_typo_only_warns_when_a_run_may_pass_it(project) -> None:
    root = project({"workflows/typo.yaml": INPUT_TYPO.replace("{extra}", "")})
    [d] = found(root, "undeclared-input")
    assert d.severity == "warning" and "null unless a run passes it" in d.message


def test_one_routing_typo_is_reported_once(project) -> None:
    steps = "".join(f"  - id: s{i}\n    uses: std.echo\n    with: {{value: {i}}}\n    next: s{i + 1}\n"
                    for i in range(1, 8))
    text = ("name: chain\nsteps:\n  - id: s0\n    uses: std.echo\n    with: {value: 0}\n    next: s11\n"
            + steps + "  - id: s8\n    end: done\n")
    root = project({"workflows/chain.yaml": text})
    assert [d.code for d in found(root)] == ["unknown-target"]
    # Without a broken route, a step nobody routes to still warns.
    fixed = text.replace("next: s11", "next: s2")
    assert [(d.code, d.step) for d in found(project({"workflows/chain.yaml": fixed}))] == [
        ("unreachable-step", "s1")]


def test_a_missing_third_party_package_is_named(project) -> None:
    root = project({"sources.yaml": "sources:\n  needs: {kind: python, module: needs}\n",
                    "needs.py": "import wfops_no_such_package.sub\n"})
    [d] = found(root, "source-error")
    assert "imports `wfops_no_such_package`, which is not installed" in d.message
    assert "pip install wfops_no_such_package" in (d.hint or "") and "module:" not in (d.hint or "")


def test_a_missing_source_module_still_points_at_module(project) -> None:
    root = project({"sources.yaml": "sources:\n  gone: {kind: python, module: gone}\n"})
    [d] = found(root, "source-error")
    assert "`module:`" in (d.hint or "")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["validate", "check"])
def test_a_source_that_blocks_at_import_is_a_finding_not_a_hang(tmp_path: Path, command: str) -> None:
    (tmp_path / "sources.yaml").write_text("sources:\n  stuck: {kind: python, module: stuck}\n")
    (tmp_path / "stuck.py").write_text(textwrap.dedent("""
        import threading
        threading.Event().wait()  # waits for ever, as a blocked network call would
    """))
    done = finishes(lambda: subprocess.run([*WFOPS, command, "--format", "json"], cwd=tmp_path, capture_output=True,
                                           text=True, env=process_env({"WFOPS_IMPORT_TIMEOUT": "1"}), timeout=50))
    assert done.returncode == 1, done.stderr
    shown = json.loads(done.stdout)
    codes = [d["code"] for d in (shown if isinstance(shown, list) else shown["diagnostics"])]
    assert "source-import-timeout" in codes


def test_a_blocked_import_is_not_waited_for_twice_and_recovers_once_it_ends(project, monkeypatch,
                                                                            tmp_path: Path) -> None:
    release = tmp_path / "release"
    root = project({"sources.yaml": "sources:\n  slow: {kind: python, module: slow_import}\n",
                    "slow_import.py": f"import os, time\nwhile not os.path.exists({str(release)!r}):\n"
                                      "    time.sleep(0.02)\n"})
    monkeypatch.setenv("WFOPS_IMPORT_TIMEOUT", "0.2")
    [first] = found(root, "source-import-timeout")
    assert "within 0.2 s" in first.message and first.file == "sources.yaml"
    [again] = found(root, "source-import-timeout")  # the first import still holds the module
    assert "still blocked" in again.message
    release.write_text("go")
    from wfops.sources.modules import _STUCK

    for thread in list(_STUCK.values()):
        thread.join(30)
    assert found(root, "source-import-timeout") == []


def test_a_bad_import_time_limit_is_a_finding(project, monkeypatch) -> None:
    root = project({"sources.yaml": "sources:\n  ok: {kind: python, module: fine}\n", "fine.py": "X = 1\n"})
    monkeypatch.setenv("WFOPS_IMPORT_TIMEOUT", "soon")
    [d] = found(root, "source-error")
    assert "WFOPS_IMPORT_TIMEOUT='soon'" in d.message


def test_the_route_hint_for_the_last_step_offers_end_once(project) -> None:
    root = project({"workflows/tail.yaml": textwrap.dedent("""\
        name: tail
        steps:
          - id: a
            uses: std.echo
            with: {value: 1}
            next: b
          - id: b
            uses: std.echo
            with: {value: 2}
        """)})
    (unrouted,) = found(root, "unrouted-outcome")
    assert unrouted.hint == "add `next: end`"
    root = project({"workflows/tail.yaml": (root / "workflows/tail.yaml").read_text().replace("    next: b\n", "")})
    hints = sorted(d.hint for d in found(root, "unrouted-outcome"))
    assert hints == ["add `next: b` (or `next: end`)", "add `next: end`"]
