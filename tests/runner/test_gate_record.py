"""The run gate's record: an unchanged deployment starts from it; any change to what the
deployment depends on runs the full checks again."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import process_env, run_cli
from tests.lock.conftest import FILES
from wfops.canonical import canonical_json
from wfops.compiler.artifact import artifact_hash
from wfops.fastpath import snapshot
from wfops.runner.gate_record import record_path, recorded
from wfops.sources.mcp import McpClientSource


@pytest.fixture(autouse=True)
def _stable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Edits within one second keep the size and mtime: a cached .pyc would hide them.
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    # Other work on the wfops code itself must not turn a hit into a miss mid-test.
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "this wfops")


def run(root: Path, name: str = "hello.local") -> dict:
    done = run_cli("run", name, "--json", "--project", str(root))
    assert done.code == 0, done.stderr
    return done.json()


def read_record(root: Path, name: str = "hello.local") -> tuple[dict, list[str]]:
    """The record's decision (its first line) and the canonical texts of its workflows (one a line)."""
    head, *texts, last = record_path(root, name).read_text(encoding="utf-8").split("\n")
    assert last == ""
    return json.loads(head), texts


def write_record(root: Path, entry: dict, texts: list[str], name: str = "hello.local") -> None:
    record_path(root, name).write_text("\n".join([json.dumps(entry), *texts, ""]), encoding="utf-8")


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
    assert hit(root)  # compile left the record: the first run starts from it
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
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "another wfops")
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
    entry, texts = read_record(recorded_project)
    entry["contracts"] = {ref: "0" * 64 for ref in entry["contracts"]}
    write_record(recorded_project, entry, texts)
    assert run(recorded_project)["status"] == "completed"
    assert read_record(recorded_project)[0]["contracts"] != entry["contracts"]  # recorded again


def loud_text(entry: dict, texts: list[str]) -> int:
    """The line of the `loud` subworkflow's text among `texts`."""
    return entry["normalized"].index(entry["artifacts"]["loud"])


def test_a_record_whose_workflows_were_edited_misses(recorded_project: Path) -> None:
    # A hit plans from the recorded normalized forms, so they must still be what the gate passed:
    # each is checked against its artifact hash (subworkflows included).
    entry, texts = read_record(recorded_project)
    assert hit(recorded_project)
    at = loud_text(entry, texts)
    form = json.loads(texts[at])
    form["steps"][0]["with"] = {"text": "not what the gate passed"}
    texts[at] = canonical_json(form)
    write_record(recorded_project, entry, texts)
    assert not hit(recorded_project)
    assert run(recorded_project)["status"] == "completed" and hit(recorded_project)  # recorded again


RECORD_EDITS = {
    # The same meaning in other bytes: the hash is of the bytes, so this misses too.
    "text reformatted": lambda e, t: t.__setitem__(loud_text(e, t), json.dumps(json.loads(t[loud_text(e, t)]))),
    "text cut short": lambda e, t: t.__setitem__(loud_text(e, t), t[loud_text(e, t)][:-1]),
    "a line removed": lambda e, t: t.pop(),
    "a line added": lambda e, t: t.append(t[0]),
    # The root claims another child: its hash no longer matches, nor does the child's.
    "a child's hash": lambda e, t: e["children"][e["artifacts"]["hello"]].update(loud="0" * 64),
    "a workflow's hash": lambda e, t: e["artifacts"].update(loud=e["artifacts"]["hello"]),
    "texts swapped": lambda e, t: t.reverse(),
    # A text no workflow uses would be stored with the run under a hash nobody checked.
    "an extra text": lambda e, t: (e["normalized"].append("f" * 64), t.append(t[0])),
}


@pytest.mark.parametrize("edit", RECORD_EDITS, ids=list(RECORD_EDITS))
def test_a_record_edited_by_hand_misses_and_the_full_gate_runs(recorded_project: Path, edit: str) -> None:
    entry, texts = read_record(recorded_project)
    RECORD_EDITS[edit](entry, texts)
    write_record(recorded_project, entry, texts)
    assert not hit(recorded_project)
    assert run(recorded_project)["output"] == {"text": "HELLO ADA"}
    assert hit(recorded_project)  # the full gate recorded it again


def test_the_recorded_texts_are_the_canonical_forms_whose_hashes_the_lock_pins(recorded_project: Path) -> None:
    # The record keeps each normalized workflow as the exact bytes its artifact hash covers,
    # and a hit hands that text to the store: the run's stored artifacts are byte for byte
    # the canonical JSON of the forms, under the hashes the lock holds.
    entry, texts = read_record(recorded_project)
    lock = json.loads((recorded_project / "wfops.lock").read_text())
    assert {name: lock["workflows"][name]["hash"] for name in entry["artifacts"]} == entry["artifacts"]
    for digest, text in zip(entry["normalized"], texts, strict=True):
        assert canonical_json(json.loads(text)) == text
        assert artifact_hash(json.loads(text), entry["children"][digest]) == digest
    run_id = run(recorded_project)["run_id"]  # a hit
    conn = sqlite3.connect(recorded_project / ".wfops" / "wfops.db")
    stored = dict(conn.execute("SELECT a.hash, a.normalized FROM artifacts a JOIN run_artifacts ra "
                               "ON ra.hash = a.hash WHERE ra.run_id = ?", (run_id,)).fetchall())
    conn.close()
    assert stored == dict(zip(entry["normalized"], texts, strict=True))


def test_a_run_that_started_from_the_record_resumes(tmp_path: Path) -> None:
    # The run stored the record's texts as its artifacts; a resume rebuilds its workflows from them.
    root = write(tmp_path / "proj", ASKING)
    assert run_cli("compile", "--project", str(root)).code == 0
    assert interrupted(root)["status"] == "interrupted"  # the full gate, which records
    assert hit(root, "ask.local")
    waiting = interrupted(root)  # from the record
    done = run_cli("resume", waiting["run_id"], "--outcome", "approve", "--payload", '{"note": "fine"}',
                   "--json", "--project", str(root))
    assert done.code == 0, done.stderr
    assert done.json()["status"] == "completed"
    assert done.json()["output"] == {"note": "fine", "n": 3}


def interrupted(root: Path) -> dict:
    done = run_cli("run", "ask.local", "--json", "--project", str(root))
    assert done.code == 3, done.stderr  # waiting at its interrupt
    return done.json()


ASKING = {
    "sources.yaml": "sources: {}\n",
    "workflows/ask.yaml": """
        name: ask
        state: {note: {type: string}, n: {type: integer}}
        output: {note: $state.note, n: $state.n}
        steps:
          - {id: count, uses: std.echo, with: {value: 3}, save: {value: state.n}, next: ask}
          - id: ask
            interrupt: approval
            resume_schema: {type: object, properties: {note: {type: string}}, required: [note]}
            save: {note: state.note}
            on: {approve: end}
        """,
    "deployments/ask.yaml": "name: ask.local\nworkflow: ask\n",
}


def test_a_hit_starts_from_the_normalized_forms(recorded_project: Path) -> None:
    from wfops.sources.python import forget_project_modules

    try:
        ready = recorded(recorded_project, "hello.local")
    finally:
        forget_project_modules(recorded_project)
    assert ready is not None
    assert all(isinstance(form, dict) for form in ready.workflows.values())  # no model built


def test_the_record_holds_what_the_run_needs(recorded_project: Path) -> None:
    entry, texts = read_record(recorded_project)
    assert set(entry["artifacts"]) == {"hello", "loud"}
    assert sorted(entry["normalized"]) == sorted(entry["artifacts"].values()) and len(texts) == 2
    files, python = entry["snapshot"]["files"], entry["snapshot"]["python"]
    assert set(files) == {"deployments/hello.local.yaml", "workflows/hello.yaml", "workflows/loud.yaml",
                          "sources.yaml", "wfops.lock"}  # not workflows/other.yaml: its edits keep the hit
    assert {"nodes/ops.py", "nodes/helper.py"} <= set(python)
    assert python["local_settings.py"] is None  # looked for, not there
    assert entry["sources"] == {"ops": {"kind": "python", "module": "nodes.ops"}}
    assert entry["snapshot"]["format"] == snapshot.FORMAT


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


@pytest.mark.slow  # starts an MCP server process per run
def test_a_run_of_a_deployment_calling_an_mcp_server_starts_from_its_record(tmp_path: Path) -> None:
    server = Path(__file__).parent.parent / "lock" / "servers" / "shifty.py"
    root = write(tmp_path / "proj", {
        "sources.yaml": f"sources:\n  shifty:\n    kind: mcp\n    command: [{json.dumps(sys.executable)}, "
                        f"{json.dumps(str(server))}]\n",
        "workflows/add.yaml": "name: add\nsteps:\n  - id: add\n    uses: shifty.add\n    with: {amount: 3}\n"
                              "    next: end\n",
        "deployments/add.yaml": "name: add.local\nworkflow: add\n",
    })
    assert run_cli("compile", cwd=root).code == 0
    assert run_cli("run", "add.local", "--json", cwd=root).code == 0
    ready = recorded(root, "add.local")
    assert ready is not None and isinstance(ready.sources["shifty"], McpClientSource)  # built from the record
    again = run_cli("run", "add.local", "--json", cwd=root)
    assert again.code == 0 and again.json()["status"] == "completed"


def test_a_run_from_the_record_keeps_the_input_in_the_deployments_order(tmp_path: Path) -> None:
    # The record must not reorder what it holds: a run from it stores its input as the full gate does.
    import wfops

    root = write(tmp_path / "proj", {
        "sources.yaml": "sources: {}\n",
        "workflows/w.yaml": "name: w\nsteps:\n  - {id: a, uses: std.echo, with: {value: 1}, next: end}\n",
        "deployments/d.yaml": "name: d.local\nworkflow: w\ninput: {zeta: 1, alpha: {y: 2, b: 3}}\n"})
    with wfops.Project(root) as project:
        assert project.compile().written
        assert hit(root, "d.local")  # compile left the record
        stored = project.get_run(project.run("d.local").run_id)
    assert stored.details is not None
    assert list(stored.details.input) == ["zeta", "alpha"] and list(stored.details.input["alpha"]) == ["y", "b"]
