"""Shell completion: typer's `--install-completion`/`--show-completion`, and the answers
the installed completion script asks the command for."""

from __future__ import annotations

from tests.harness import run_cli


def test_completion_script_and_answers() -> None:
    shown = run_cli("--show-completion", "bash")
    assert shown.code == 0, shown.stderr
    assert "_WFOPS_COMPLETE=complete_bash" in shown.stdout and "complete " in shown.stdout
    helped = run_cli("--help")
    assert "--install-completion" in helped.stdout
    verbs = run_cli(env={"_WFOPS_COMPLETE": "complete_bash", "COMP_WORDS": "wfops ru", "COMP_CWORD": "1"})
    assert verbs.code == 0 and verbs.stdout.split() == ["run", "runs"]
    nested = run_cli(env={"_WFOPS_COMPLETE": "complete_bash", "COMP_WORDS": "wfops runs l", "COMP_CWORD": "2"})
    assert nested.stdout.split() == ["list"]
