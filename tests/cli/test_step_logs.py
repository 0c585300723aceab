"""Step logs: what python nodes print and log, kept per attempt with the trace, bounded,
masked, and shown by `wfops runs logs RUN [STEP]`."""

from __future__ import annotations

from pathlib import Path

from tests.cli.loop_project import write_loop_project
from tests.harness import run_cli
from wfops.sources.steplogs import MAX_LOG_CHARS, Capture


def _set_items(root: Path, items: str, *, secrets: bool = False) -> None:
    deployment = root / "deployments" / "loop.local.yaml"
    text = f"name: loop.local\nworkflow: loop\nbindings: {{ops: ops}}\ninput: {{items: [{items}]}}\n"
    deployment.write_text(text + ("secrets: [LOOP_TOKEN]\n" if secrets else ""))
    assert run_cli("compile", cwd=root).code == 0


def test_each_item_keeps_what_its_node_printed_and_logged(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=2)
    assert run_cli("run", "loop.local", cwd=root).code == 0
    logs = run_cli("runs", "logs", "last", "--json", cwd=root).json()
    assert logs == [
        {"seq": 1, "step": "each[0]", "attempt": 1,
         "text": "working on 1\nstderr note 1\nWARNING loop: logged 1\n", "cut": 0},
        {"seq": 2, "step": "each[1]", "attempt": 1,
         "text": "working on 2\nstderr note 2\nWARNING loop: logged 2\n", "cut": 0}]
    one = run_cli("runs", "logs", "last", "each[1]", cwd=root)
    assert one.stdout == "== #2 each[1] ==\nworking on 2\nstderr note 2\nWARNING loop: logged 2\n"
    assert [log["seq"] for log in run_cli("runs", "logs", "last", "each", "--json", cwd=root).json()] == [1, 2]
    assert run_cli("runs", "logs", "last", "nosuch", cwd=root).stdout.startswith("no step logs for step nosuch")


def test_a_failed_attempt_keeps_its_traceback(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1, compile_it=False)
    _set_items(root, "-4")
    assert run_cli("run", "loop.local", cwd=root).code == 1
    [log] = run_cli("runs", "logs", "last", "--json", cwd=root).json()
    assert log["step"] == "each[0]" and log["text"].startswith("working on -4\n")
    assert "Traceback (most recent call last):" in log["text"]
    assert log["text"].rstrip().endswith("ValueError: negative item -4")


def test_logs_are_masked_and_bounded(tmp_path: Path) -> None:
    root = write_loop_project(tmp_path / "p", items=1, compile_it=False)
    _set_items(root, "7, 8", secrets=True)
    done = run_cli("run", "loop.local", cwd=root, env={"LOOP_TOKEN": "s3cr3t-t0ken-value"})
    assert done.code == 0, done.stderr
    seven, eight = run_cli("runs", "logs", "last", "--json", cwd=root).json()
    assert "the token is ***" in seven["text"] and "s3cr3t" not in seven["text"]
    assert len(eight["text"]) < MAX_LOG_CHARS + 100
    assert "characters cut ...]" in eight["text"] and eight["text"].endswith("WARNING loop: logged 8\n")
    assert eight["cut"] > 0 and seven["cut"] == 0  # the JSON says the bound cut it, as the UI shows


def test_the_bound_keeps_the_start_and_the_end() -> None:
    capture = Capture()
    capture.write("START\n")
    for i in range(10_000):
        capture.write(f"line {i}\n")
    text = capture.text()
    assert text.startswith("START\nline 0\n") and text.endswith("line 9999\n")
    assert len(text) <= MAX_LOG_CHARS + 60 and "characters cut ...]" in text
    small = Capture()
    small.write("a\n")
    assert small.text() == "a\n"


def test_a_log_any_store_can_hold() -> None:
    from wfops.sources.steplogs import storable

    assert storable("ok \udc80 and \x00 end") == "ok \\udc80 and \\x00 end"
    assert storable("plain ✓\n") == "plain ✓\n"
