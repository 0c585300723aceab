"""The run gate's record: an unchanged deployment starts from it; any change to what the
deployment depends on runs the full checks again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import process_env, run_cli
from tests.lock.conftest import FILES
from wfops.compiler import cachekey
from wfops.runner import gate_record
from wfops.runner.gate_record import record_path, recorded


@pytest.fixture(autouse=True)
def _stable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Edits within one second keep the size and mtime: a cached .pyc would hide them.
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    # Other work on the wfops code itself must not turn a hit into a miss mid-test.
    monkeypatch.setattr(cachekey, "_tool_fingerprint", lambda: "this wfops")


def run(root: Path, name: str = "hello.local") -> dict:
    done = run_cli("run", name, "--json", "--project", str(root))
    assert done.code == 0, done.stderr
    return done.json()


def hit(root: Path, name: str = "hello.local") -> bool:
    from wfops.sources.python import forget_project_modules

    try:
        return recorded(root, name) is not None
    finally:
        forget_project_modules(root)


HELPER = "try:\n    import local_settings  # optional\nexcept ImportError:\n    pass\nSUFFIX = ''\n"


@pytest.fixture
def recorded_project(tmp_path: Path) -> Path:
    root = write(tmp_path / "proj", {**FILES, "workflows/other.yaml": "name: other\nsteps:\n  - {id: a, end: done}\n",
                                     "nodes/helper.py": HELPER})
    ops = root / "nodes/ops.py"
    ops.write_text(ops.read_text().replace("import wfops\n", "import wfops\nfrom nodes.helper import SUFFIX\n"))
    assert run_cli("compile", "--project", str(root)).code == 0
    assert not hit(root)
    first = run(root)
    assert hit(root)
    assert run(root)["output"] == first["output"] == {"text": "HELLO ADA"}
    return root


CHANGES = {
    "deployment edited": lambda r: write(r, {"deployments/hello.local.yaml": "name: hello.local\nworkflow: hello\n"
                                                                              "input: {name: bob}\n"}),
    "root workflow edited": lambda r: (r / "workflows/hello.yaml").write_text(
        (r / "workflows/hello.yaml").read_text() + "\n# edited\n"),
    "subworkflow edited": lambda r: (r / "workflows/loud.yaml").write_text(
        (r / "workflows/loud.yaml").read_text() + "\n# edited\n"),
    "sources.yaml edited": lambda r: (r / "sources.yaml").write_text((r / "sources.yaml").read_text() + "\n"),
    "lock edited": lambda r: (r / "wfops.lock").write_text((r / "wfops.lock").read_text() + "\n"),
    "python source edited": lambda r: (r / "nodes/ops.py").write_text((r / "nodes/ops.py").read_text() + "\n"),
    "module it imports edited": lambda r: write(r, {"nodes/helper.py": HELPER + "# edited\n"}),
    "module it looked for created": lambda r: write(r, {"local_settings.py": "x = 1\n"}),
    "workflow file added": lambda r: write(r, {"workflows/new.yaml": "name: new\nsteps:\n  - {id: a, end: x}\n"}),
    "deployment file added": lambda r: write(r, {"deployments/b.yaml": "name: b\nworkflow: other\n"}),
    "record corrupt": lambda r: record_path(r, "hello.local").write_text("{oops"),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_change_to_what_the_deployment_depends_on_misses(recorded_project: Path, change: str) -> None:
    CHANGES[change](recorded_project)
    assert not hit(recorded_project)


def test_another_wfops_misses(recorded_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cachekey, "_tool_fingerprint", lambda: "another wfops")
    assert not hit(recorded_project)


def test_an_unrelated_workflow_edit_keeps_the_hit(recorded_project: Path) -> None:
    write(recorded_project, {"workflows/other.yaml": "name: other\nsteps: [{id: a, bogus: 1}]\n",
                             "README.md": "notes\n"})
    assert hit(recorded_project)
    assert run(recorded_project)["status"] == "completed"  # and the broken file does not refuse it


def test_a_miss_runs_the_full_checks(recorded_project: Path) -> None:
    # A workflow edited but not compiled: the record misses, the full gate refuses (stale lock).
    wf = recorded_project / "workflows/loud.yaml"
    wf.write_text(wf.read_text().replace("on: {ok: end, empty: end}", "on: {ok: end, empty: end}\n    timeout: 2"))
    done = run_cli("run", "hello.local", "--project", str(recorded_project))
    assert done.code == 2 and "stale-lock" in done.stderr
    assert run_cli("compile", "--project", str(recorded_project)).code == 0
    assert run(recorded_project)["status"] == "completed" and hit(recorded_project)


def test_a_contract_that_differs_from_the_record_runs_the_full_checks(recorded_project: Path) -> None:
    # The files hash the same but a source reports another contract (an MCP server upgraded):
    # the run does not trust the record; the full gate decides (here: the lock agrees, it runs).
    path = record_path(recorded_project, "hello.local")
    entry = json.loads(path.read_text())
    entry["contracts"] = {ref: "0" * 64 for ref in entry["contracts"]}
    path.write_text(json.dumps(entry))
    assert run(recorded_project)["status"] == "completed"
    assert json.loads(path.read_text())["contracts"] != entry["contracts"]  # recorded again


def test_a_record_whose_workflows_were_edited_misses(recorded_project: Path) -> None:
    # A hit plans from the recorded normalized forms, so they must still be what the gate passed:
    # each is checked against its artifact hash (subworkflows included).
    path = record_path(recorded_project, "hello.local")
    entry = json.loads(path.read_text())
    assert hit(recorded_project)
    form = entry["normalized"][entry["artifacts"]["loud"]]
    form["steps"][0]["with"] = {"text": "not what the gate passed"}
    path.write_text(json.dumps(entry))
    assert not hit(recorded_project)
    assert run(recorded_project)["status"] == "completed" and hit(recorded_project)  # recorded again


def test_a_hit_starts_from_the_normalized_forms(recorded_project: Path) -> None:
    from wfops.sources.python import forget_project_modules

    try:
        ready = recorded(recorded_project, "hello.local")
    finally:
        forget_project_modules(recorded_project)
    assert ready is not None
    assert all(isinstance(form, dict) for form in ready.workflows.values())  # no model built


def test_the_record_holds_what_the_run_needs(recorded_project: Path) -> None:
    entry = json.loads(record_path(recorded_project, "hello.local").read_text())
    assert set(entry["artifacts"]) == {"hello", "loud"}
    assert {"deployments/hello.local.yaml", "workflows/hello.yaml", "workflows/loud.yaml", "sources.yaml",
            "wfops.lock", "nodes/ops.py", "nodes/helper.py"} <= set(entry["files"])
    assert "workflows/other.yaml" not in entry["files"]
    assert entry["files"]["local_settings.py"] is None  # looked for, not there
    assert entry["sources"] == {"ops": {"kind": "python", "module": "nodes.ops"}}
    assert entry["format"] == gate_record.FORMAT


@pytest.mark.slow
def test_a_recorded_run_loads_no_yaml_parser_and_no_checks(recorded_project: Path) -> None:
    script = ("import sys\nfrom wfops.cli.main import main\ntry:\n    main(['run', 'hello.local', '--json'])\n"
              "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
              "print(sorted(m for m in ('ruamel', 'wfops.compiler.validate', 'wfops.lock.gate', 'jsonschema', "
              "'wfops.model.workflow') if m in sys.modules))\n")
    runs = [subprocess.run([sys.executable, "-c", script], cwd=recorded_project, capture_output=True, text=True,
                           env=process_env(), timeout=120) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    # The first process is another wfops (its own fingerprint): it checks in full and records.
    assert "'ruamel'" in runs[0].stdout.splitlines()[-1]
    assert runs[1].stdout.splitlines()[-1] == "[]", runs[1].stdout + runs[1].stderr


EVERY_KIND = {
    "sources.yaml": "sources: {}\n",
    "workflows/child.yaml": """
        name: child
        input: {type: object, properties: {n: {type: integer}}}
        state: {n: {type: integer}}
        output: {n: $state.n}
        steps:
          - {id: echo, uses: std.echo, with: {value: $input.n}, save: {value: state.n}, next: end}
        """,
    "workflows/kinds.yaml": """
        name: kinds
        input: {type: object, properties: {items: {type: array}, big: {type: boolean}}}
        state:
          seen: {type: array, reducer: extend, default: []}
          total: {type: integer, reducer: add, default: 0}
          side: {type: array, reducer: append}
          child: {type: object}
          note: {type: string}
        output: {seen: $state.seen, total: $state.total, side: $state.side, child: $state.child, note: $state.note}
        steps:
          - id: fan
            foreach: $input.items
            uses: std.echo
            with: {value: $item}
            mode: parallel
            concurrency: 2
            save: state.seen
            save_each: {value: state.total}
            retry: {attempts: 2, backoff: 0}
            next: branches
          - id: branches
            parallel:
              left:
                - {id: l1, uses: std.echo, with: {value: left}, save: {value: state.side}, next: end}
              right:
                - {id: r1, workflow: child, with: {n: 7}, save: state.child, next: end}
            next: pick
          - id: pick
            if: {eq: [$input.big, true]}
            then: big
            else: small
          - id: big
            uses: std.format
            with: {template: "big {n}", values: {n: $state.total}}
            save: {text: state.note}
            catch: {next: failed}
            next: end
          - id: small
            uses: std.format
            with: {template: "small {n}", values: {n: $state.total}}
            save: {text: state.note}
            next: end
          - {id: failed, end: failed}
        """,
    "deployments/kinds.yaml": "name: kinds.local\nworkflow: kinds\ninput: {items: [1, 2, 3], big: true}\n",
}


def test_a_hit_runs_every_step_kind_as_the_full_gate_does(tmp_path: Path) -> None:
    # The first run plans from the gate's models, the second from the recorded normalized forms.
    root = write(tmp_path / "proj", EVERY_KIND)
    compiled = run_cli("compile", "--project", str(root))
    assert compiled.code == 0, compiled.stdout + compiled.stderr
    first = run(root, "kinds.local")
    assert hit(root, "kinds.local")
    second = run(root, "kinds.local")
    assert first["status"] == second["status"] == "completed"
    assert first["output"] == second["output"] == {"seen": [{"value": 1}, {"value": 2}, {"value": 3}], "total": 6, "side": ["left"],
                                                   "child": {"n": 7}, "note": "big 6"}
    traces = [run_cli("runs", "trace", r["run_id"], "--json", "--project", str(root)).json() for r in (first, second)]
    assert [e["step"] for e in traces[0]] == [e["step"] for e in traces[1]]
