"""Shell completion: typer's `--install-completion`/`--show-completion`, and the answers
the installed completion script asks the command for."""

from __future__ import annotations

import shlex
import subprocess

from tests.harness import WFOPS, process_env, run_cli


def test_completion_script_and_answers() -> None:
    # As a user types it, in bash: typer finds the shell among the process's parents (with
    # shellingham installed, `--show-completion` takes no value). In-process, the parents are
    # whatever runs the tests, which need not include a shell.
    shown = subprocess.run(["bash", "-c", f"{shlex.join(WFOPS)} --show-completion; exit $?"],
                           capture_output=True, text=True, env=process_env(), timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "_WFOPS_COMPLETE=complete_bash" in shown.stdout and "complete " in shown.stdout
    helped = run_cli("--help")
    assert "--install-completion" in helped.stdout
    verbs = run_cli(env={"_WFOPS_COMPLETE": "complete_bash", "COMP_WORDS": "wfops ru", "COMP_CWORD": "1"})
    assert verbs.code == 0 and verbs.stdout.split() == ["run", "runs"]
    nested = run_cli(env={"_WFOPS_COMPLETE": "complete_bash", "COMP_WORDS": "wfops runs li", "COMP_CWORD": "2"})
    assert nested.stdout.split() == ["list"]
