"""`wfops watch`: a change to a project file triggers revalidation, python sources reloaded."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from wfops.cli.watch_cmd import is_watched, one_pass, watch_loop
from wfops.sources.python import forget_project_modules

NODES = '''
from pydantic import BaseModel
import wfops

class In(BaseModel):
    text: str

class Out(BaseModel):
    text: str

@wfops.node(outcomes={outcomes})
def shout(payload: In) -> Out:
    return Out(text=payload.text.upper())
'''

WORKFLOW = """
name: loud
input: {type: object, properties: {text: {type: string}}}
state: {text: {type: string}}
output: {text: $state.text}
steps:
  - id: shout
    uses: ops.shout
    with: {text: $input.text}
    save: {text: state.text}
    next: end
"""


@pytest.fixture
def project(make_project) -> Iterator[Path]:
    root = make_project({
        "sources.yaml": "sources:\n  ops: {kind: python, module: watchnodes}\n",
        "watchnodes.py": NODES.format(outcomes='["ok"]'),
        "workflows/loud.yaml": WORKFLOW,
        "deployments/loud.local.yaml": "name: loud.local\nworkflow: loud\ninput: {text: hey}\n",
    })
    yield root
    forget_project_modules(root)


def test_is_watched(tmp_path: Path) -> None:
    yes = ["sources.yaml", "wfops.lock", "workflows/a.yaml", "deployments/b.yml", "pkg/mod.py", "x.py"]
    no = ["README.md", "workflows/sub/a.yaml", ".wfops/wfops.db", ".git/index", "pkg/__pycache__/m.py",
          ".venv/lib/x.py", "workflows/notes.txt", "../elsewhere.py"]
    for rel in yes:
        assert is_watched(tmp_path, tmp_path / rel), rel
    for rel in no:
        assert not is_watched(tmp_path, tmp_path / rel), rel


def test_an_edit_triggers_revalidation_of_what_changed(project: Path) -> None:
    calls: list[set[str]] = []
    stop = threading.Event()
    first = threading.Event()
    second = threading.Event()

    def handle(changed: set[str]) -> None:
        calls.append(changed)
        (second if changed else first).set()

    thread = threading.Thread(target=watch_loop, args=(project, handle),
                              kwargs={"stop_event": stop, "debounce_ms": 50}, daemon=True)
    thread.start()
    try:
        assert first.wait(60), "no initial pass"
        time.sleep(0.5)  # let the watcher arm before editing
        (project / "README.md").write_text("not watched\n")
        (project / ".wfops").mkdir(exist_ok=True)
        (project / ".wfops" / "wfops.db").write_text("not watched\n")
        (project / "workflows" / "loud.yaml").write_text(WORKFLOW.replace("hey", "ho") + "\n# edited\n")
        assert second.wait(60), "the edit was never noticed"  # a hang guard, not a speed bound
        # The README and .wfops/ writes (made first) triggered no pass of their own.
        assert calls[1] == {"workflows/loud.yaml"}
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive(), "watch_loop did not stop on its stop event"


def test_max_passes_ends_the_loop(project: Path) -> None:
    seen: list[set[str]] = []

    def edit_soon() -> None:
        time.sleep(0.6)
        (project / "watchnodes.py").write_text(NODES.format(outcomes='["ok"]') + "\n# touched\n")

    threading.Thread(target=edit_soon, daemon=True).start()
    passes = watch_loop(project, seen.append, max_passes=1, debounce_ms=50)
    assert passes == 1 and seen[0] == set() and seen[1] == {"watchnodes.py"}


def test_one_pass_reloads_python_sources(project: Path) -> None:
    out = io.StringIO()
    assert one_pass(project, set(), stream=out) is True
    assert "ok: no problems" in out.getvalue()
    # The node now declares an outcome the workflow does not route: only a fresh import sees it.
    (project / "watchnodes.py").write_text(NODES.format(outcomes='["ok", "quiet"]'))
    out = io.StringIO()
    assert one_pass(project, {"watchnodes.py"}, stream=out) is False
    text = out.getvalue()
    assert "watchnodes.py" in text.splitlines()[1] and "unrouted-outcome" in text and "quiet" in text
    (project / "watchnodes.py").write_text(NODES.format(outcomes='["ok"]'))
    assert one_pass(project, {"watchnodes.py"}, stream=io.StringIO()) is True


def test_one_pass_reruns_a_valid_deployment(project: Path, tmp_path: Path, capsys) -> None:
    from tests.harness import run_cli

    assert run_cli("compile", cwd=project).returncode == 0
    out = io.StringIO()
    assert one_pass(project, set(), deployment="loud.local", db=str(tmp_path / "w.db"), stream=out)
    assert "run of loud.local exited 0" in out.getvalue()
    assert "HEY" in capsys.readouterr().out
    (project / "workflows" / "loud.yaml").write_text(WORKFLOW + "description: changed\n")
    out = io.StringIO()
    one_pass(project, {"workflows/loud.yaml"}, deployment="loud.local", db=str(tmp_path / "w.db"), stream=out)
    assert "wfops: error: run of loud.local refused" in out.getvalue()  # reported; the loop goes on
    assert "error[stale-lock]" in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_stops_watch_cleanly(project: Path) -> None:
    # A real process: the point is what SIGINT does to it.
    import signal
    import subprocess

    from tests.harness import WFOPS, process_env

    proc = subprocess.Popen([*WFOPS, "watch"], cwd=project, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=process_env({"PYTHONUNBUFFERED": "1"}))
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60  # a hang guard
        seen = ""
        while "validated in" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert "watching" in seen and "ok: no problems" in seen, seen
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err


def test_a_bug_during_a_pass_does_not_end_the_session(project: Path, monkeypatch, capsys) -> None:
    import wfops.compiler.validate as validate

    def boom(root: Path, **_: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(validate, "validate_project", boom)
    assert one_pass(project, {"workflows/loud.yaml"}, stream=io.StringIO()) is False
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: simulated bug" in err and "crash" in err
