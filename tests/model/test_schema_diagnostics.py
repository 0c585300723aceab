"""Schema errors through `load_project`: the right code, at the right line:col, in words a user knows."""

from __future__ import annotations

import pytest

from wfops.diagnostics import Diagnostic
from wfops.loader.project import load_project


def diagnostics(make_project, files: dict[str, str]) -> list[Diagnostic]:
    project = load_project(make_project(files))
    return sorted(project.diagnostics, key=lambda d: (d.file, d.line, d.column))


def one(make_project, workflow: str) -> Diagnostic:
    found = diagnostics(make_project, {"workflows/w.yaml": workflow})
    assert len(found) == 1, found
    return found[0]


WF = "name: w\nsteps:\n"

# (workflow text, code, line, column, message)
CASES = {
    "unknown-key-in-step": (
        WF + "  - id: a\n    uses: std.echo\n    wiht: {x: 1}\n",
        "unknown-key", 5, 5, "unknown key `wiht` in step `a`"),
    "unknown-top-key": (
        WF + "  - id: a\n    end: ok\nstpes: []\n",
        "unknown-key", 5, 1, "unknown key `stpes` in the file"),
    "unknown-key-in-retry": (
        WF + "  - id: a\n    uses: std.echo\n    retry: {attempts: 2, backof: 1}\n",
        "unknown-key", 5, 26, "unknown key `backof` in `retry` of step `a`"),
    "end-as-step-id": (
        WF + "  - id: end\n    end: ok\n",
        "reserved-step-id", 3, 9, "step `end`: `id: end` is reserved: `end` is the route that finishes a workflow"),
    "no-kind": (
        WF + "  - id: a\n    with: {x: 1}\n",
        "unknown-step-kind", 3, 5, "step `a` has no kind"),
    "two-kinds": (
        WF + "  - id: a\n    uses: std.echo\n    end: ok\n",
        "ambiguous-step-kind", 4, 5, "step `a` mixes two kinds: `end` and `uses`"),
    "step-not-mapping": (
        WF + "  - just text\n",
        "wrong-type", 3, 5, "step 1 must be a mapping with `id` and a kind key, got a string"),
    "missing-id": (
        WF + "  - uses: std.echo\n",
        "missing-key", 3, 5, "`id` is required in step 1"),
    "bad-step-id": (
        WF + "  - id: 9a\n    end: ok\n",
        "invalid-value", 3, 9, "`id` of step `9a`: \"9a\" is not a valid step id"),
    "missing-else": (
        WF + "  - id: a\n    if: {eq: [1, 2]}\n    then: b\n  - id: b\n    end: ok\n",
        "missing-key", 3, 5, "`else` is required in step `a`"),
    "bad-condition-operator": (
        WF + "  - id: a\n    if: {equals: [1, 2]}\n    then: b\n    else: b\n  - id: b\n    end: ok\n",
        "invalid-condition", 4, 9, "`if` of step `a`: unknown condition operator `equals`"),
    "foreach-without-body": (
        WF + "  - id: a\n    foreach: $state.x\n",
        "invalid-foreach", 3, 5, "step `a`: a foreach step needs exactly one of `uses` or `workflow`"),
    "next-and-on-ok": (
        WF + "  - id: a\n    uses: std.echo\n    next: b\n    on: {ok: b}\n  - id: b\n    end: ok\n",
        "conflicting-routes", 3, 5, "step `a`: the step gives both `next` and `on.ok`"),
    "retry-attempts-zero": (
        WF + "  - id: a\n    uses: std.echo\n    retry: {attempts: 0}\n",
        "invalid-value", 5, 23, "`retry.attempts` of step `a` must be >= 1, got 0"),
    "bad-save-target": (
        WF + "  - id: a\n    uses: std.echo\n    save: {value: text}\n",
        "invalid-value", 5, 19, "`save.value` of step `a`: \"text\" is not a valid save target"),
    "bare-save-not-state": (
        WF + "  - id: a\n    uses: std.echo\n    save: text\n",
        "invalid-value", 5, 11, "`save` of step `a`: \"text\" is not a valid save target"),
    "save-wrong-type": (
        WF + "  - id: a\n    uses: std.echo\n    save: 5\n",
        "wrong-type", 5, 11,
        "`save` of step `a` must be a `state.<field>` path or a mapping of output fields to paths, got an integer"),
    "bad-route-target": (
        WF + "  - id: a\n    uses: std.echo\n    on: {ok: 'no such'}\n",
        "invalid-value", 5, 14, "`on.ok` of step `a`: \"no such\" is not a valid step id"),
    "bad-mode": (
        WF + "  - id: a\n    foreach: $state.x\n    uses: std.echo\n    mode: fast\n",
        "invalid-value", 6, 11, "`mode` of step `a`: \"fast\" is not allowed; expected \"serial\" or \"parallel\""),
    "union-type-merged": (
        "name: w\nversion: [1]\nsteps:\n  - id: a\n    end: ok\n",
        "wrong-type", 2, 10, "`version` must be a number or a string, got a list"),
    "empty-steps": (
        "name: w\nsteps: []\n",
        "invalid-value", 2, 8, "`steps` needs at least 1 item, got 0"),
    "bad-reducer": (
        WF + "  - id: a\n    end: ok\nstate:\n  x: {type: string, reducer: concat}\n",
        "invalid-value", 6, 30, "`state.x.reducer`: \"concat\" is not allowed; expected \"replace\", \"append\", "
        "\"extend\", \"union\", \"merge\", \"add\", \"min\" or \"max\""),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_workflow_schema_errors(case: str, make_project) -> None:
    text, code, line, column, message = CASES[case]
    d = one(make_project, text)
    assert (d.code, d.line, d.column, d.message) == (code, line, column, message)
    assert d.file == "workflows/w.yaml" and d.severity == "error" and d.hint


def test_hints(make_project) -> None:
    d = one(make_project, CASES["unknown-key-in-step"][0])
    assert d.hint == ("did you mean `with`? allowed here: id, description, next, on, uses, with, save, "
                      "retry, timeout, catch, cache")
    assert "did you mean `uses`?" in one(make_project, WF + "  - id: a\n    use: std.echo\n").hint
    assert one(make_project, CASES["two-kinds"][0]).hint.startswith("keep one kind key per step")
    # Discriminator errors name the kinds, never every branch's field list.
    no_kind = one(make_project, CASES["no-kind"][0])
    assert "`uses:`" in no_kind.hint and "CallStep" not in no_kind.message + no_kind.hint


def test_several_errors_in_one_file(make_project) -> None:
    found = diagnostics(make_project, {"workflows/w.yaml": WF + "  - id: a\n    uses: std.echo\n    wiht: 1\n"
                                       "  - id: b\n    end: 'x y'\n"})
    assert [(d.code, d.line, d.column) for d in found] == [("unknown-key", 5, 5), ("invalid-value", 7, 10)]


def test_sources_errors(make_project) -> None:
    found = diagnostics(make_project, {"sources.yaml": (
        "sources:\n"
        "  x: {kind: ftp}\n"
        "  y: {module: a}\n"
        "  Bad id: {kind: python, module: a}\n"
        "  z:\n    kind: mcp\n    command: python -m server\n"
        "  w: {kind: mcp, command: [a], bogus: 1}\n"
        "  v: {kind: mcp, command: [a], url: 'http://x'}\n")})
    got = [(d.code, d.line, d.column, d.message) for d in found]
    assert got == [
        ("invalid-value", 2, 13, "source `x`: unknown kind \"ftp\"; expected \"python\", \"mcp\", \"openapi\", \"command\""),
        ("missing-key", 3, 6, "`kind` is required in source `y`"),
        ("invalid-value", 4, 3, "\"Bad id\" is not a valid source id"),
        ("shell-command", 7, 14, "source `z`: `command` must be an argv list; a shell string is not allowed"),
        ("unknown-key", 8, 32, "unknown key `bogus` in source `w`"),
        ("invalid-source", 9, 6, "source `v`: an mcp source needs exactly one of `command` or `url`"),
    ]
    assert "[python, -m, server]" in found[3].hint
    assert found[4].hint.endswith("allowed here: kind, command, url, env, cwd, timeout, tools, description, headers, "
                                  "log_level, auth")


def test_std_is_reserved(make_project) -> None:
    found = diagnostics(make_project, {"sources.yaml": "sources:\n  std: {kind: python, module: a}\n"})
    assert [(d.code, d.line, d.column) for d in found] == [("reserved-source-id", 2, 3)]


def test_deployment_errors(make_project) -> None:
    found = diagnostics(make_project, {"deployments/d.yaml": (
        "name: d\nworkflow: w\nsecrets: X\nbindings: {a: 1}\ninput: []\ndrift: never\nwrkflow: 1\n")})
    got = [(d.code, d.line, d.column, d.message) for d in found]
    assert got == [
        ("wrong-type", 3, 10, "`secrets` must be a list, got a string"),
        ("wrong-type", 4, 15, "`bindings.a` must be a string, got an integer"),
        ("wrong-type", 5, 8, "`input` must be a mapping, got a list"),
        ("invalid-value", 6, 8, "`drift`: \"never\" is not allowed; expected \"fail\" or \"warn\""),
        ("unknown-key", 7, 1, "unknown key `wrkflow` in the file"),
    ]
    assert found[-1].hint.startswith("did you mean `workflow`?")
