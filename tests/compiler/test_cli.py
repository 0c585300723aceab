"""`wfops validate`: exit codes, formats, path selection, standalone files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write
from tests.harness import CliResult, run_cli

BROKEN = "name: broken\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    next: nowhere\n"
CLEAN = "name: fine\nsteps:\n  - id: a\n    uses: std.echo\n    with: {value: 1}\n    next: end\n"


def wfops(args: list[str], cwd: Path) -> CliResult:
    return run_cli(*args, cwd=cwd)


def call(args: list[str], capsys=None) -> tuple[int, str, str]:
    """`wfops ARGS` from the current directory: (exit code, stdout, stderr)."""
    done = run_cli(*args)
    return done.code, done.stdout, done.stderr


def test_clean_project_exits_0(project) -> None:
    root = project({"workflows/fine.yaml": CLEAN})
    done = wfops(["validate", "--format", "json"], root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"ok": True, "diagnostics": []}


def test_errors_exit_1_without_traceback(project) -> None:
    root = project({"workflows/broken.yaml": BROKEN})
    done = wfops(["validate", "--format", "json"], root)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert [(d["code"], d["line"], d["column"]) for d in report["diagnostics"]] == [("unknown-target", 6, 11)]


def test_no_project_exits_2(tmp_path: Path) -> None:
    done = wfops(["validate"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("wfops: error: no wfops project")


def test_warnings_only_exit_0(project, capsys, monkeypatch) -> None:
    root = project({"workflows/w.yaml": CLEAN.replace("fine", "w") + "  - id: orphan\n    end: x\n"})
    monkeypatch.chdir(root)
    code, out, _ = call(["validate", "--format", "json"], capsys)
    assert code == 0
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["unreachable-step"]


def test_unknown_format_is_a_usage_error(project, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project())
    code, out, err = call(["validate", "--format", "yaml"], capsys)
    assert (code, out) == (2, "")
    assert "unknown format 'yaml'" in err


def test_project_option(project, capsys, tmp_path) -> None:
    root = project({"workflows/broken.yaml": BROKEN})
    code, out, _ = call(["validate", "--project", str(root), "--format", "json"], capsys)
    assert code == 1 and "unknown-target" in out


def test_paths_select_findings(project, capsys, monkeypatch) -> None:
    root = project({"workflows/broken.yaml": BROKEN, "workflows/other.yaml": BROKEN.replace("broken", "other")})
    monkeypatch.chdir(root)
    code, out, _ = call(["validate", "--format", "json", "workflows/other.yaml"], capsys)
    assert code == 1
    assert {d["file"] for d in json.loads(out)["diagnostics"]} == {"workflows/other.yaml"}
    code, out, _ = call(["validate", "--format", "json", "sources.yaml"], capsys)
    assert (code, json.loads(out)["diagnostics"]) == (0, [])


def test_missing_path_is_a_file_missing_finding(project, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project())
    code, out, _ = call(["validate", "--format", "json", "workflows/nope.yaml"], capsys)
    assert code == 1
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["file-missing"]


def test_python_path_reports_its_declaration(project, capsys, monkeypatch) -> None:
    root = project({"nodes.py": "import nothing_here_at_all\n"})
    monkeypatch.chdir(root)
    code, out, _ = call(["validate", "--format", "json", "nodes.py"], capsys)
    assert code == 1
    assert [(d["code"], d["file"]) for d in json.loads(out)["diagnostics"]] == [("source-error",
                                                                                 "sources.yaml")]


def test_other_yaml_in_project_is_ignored_unless_it_is_ours(project, capsys, monkeypatch) -> None:
    root = project({".github/workflows/ci.yml": "on: push\njobs: {}\n",
                    "examples/w.yaml": BROKEN})
    monkeypatch.chdir(root)
    code, out, _ = call(["validate", "--format", "json", ".github/workflows/ci.yml"], capsys)
    assert (code, json.loads(out)["diagnostics"]) == (0, [])
    code, out, _ = call(["validate", "--format", "json", "examples/w.yaml"], capsys)
    assert code == 1
    assert [(d["code"], d["file"]) for d in json.loads(out)["diagnostics"]] == [("unknown-target",
                                                                                 "examples/w.yaml")]


def test_standalone_file_outside_any_project(tmp_path, capsys, monkeypatch) -> None:
    write(tmp_path, {"loose/workflows/w.yaml": BROKEN, "loose/deployments/d.yaml": "name: d\nworkflow: X\n",
                     "loose/notes.yaml": "hello: world\n"})
    monkeypatch.chdir(tmp_path)
    code, out, _ = call(["validate", "--format", "json", "loose/workflows/w.yaml", "loose/deployments/d.yaml",
                         "loose/notes.yaml"], capsys)
    assert code == 1
    found = [(d["code"], d["file"], d["line"]) for d in json.loads(out)["diagnostics"]]
    assert found == [("invalid-value", "loose/deployments/d.yaml", 2), ("unknown-kind", "loose/notes.yaml", 1),
                     ("unknown-target", "loose/workflows/w.yaml", 6)]


def test_standalone_checks_std_capabilities(tmp_path) -> None:
    from wfops.compiler.standalone import validate_text

    text = CLEAN.replace("with: {value: 1}", "with: {valeu: 1}").replace("std.echo", "std.echo")
    found = validate_text(text, "workflow")
    assert sorted((d.code, d.line) for d in found) == [("missing-input", 5), ("unknown-input", 5)]
    assert validate_text(CLEAN.replace("std.echo", "other.thing"), "workflow") == []


def test_text_format_has_hint_and_summary(project, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project({"workflows/broken.yaml": BROKEN}))
    code, out, _ = call(["validate"], capsys)
    assert code == 1
    assert out.splitlines()[0].startswith("workflows/broken.yaml:6:11: error[unknown-target]")
    assert "hint:" in out
