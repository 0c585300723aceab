"""`wfops init [DIR] [--force]`: scaffold a project that validates, compiles, checks and runs as is."""

from __future__ import annotations

import shlex
from pathlib import Path

from wfops.api import init
from wfops.api.scaffold import SCHEMA_DIR
from wfops.cli.output import say


def run(*, directory: str = ".", force: bool = False, wfops_spec: str | None = None,
        example: str | None = None) -> int:
    made = init(directory, force=force, wfops_spec=wfops_spec, example=example)
    target = made.directory
    say(f"Created a wfops project in {target}:")
    for rel in made.written:
        if not rel.startswith(SCHEMA_DIR):
            say(f"  {rel}")
    say(f"  {SCHEMA_DIR}/ (JSON Schemas for editors; refresh with `wfops schema --kind K`)")
    if made.repository is not None:
        say(f"and, at the root of the git repository {made.repository} (hooks and CI run there, "
            "pointed at the project):")
        for rel in made.at_root:
            say(f"  {rel}")
    for rel in made.merged:
        say(f"Added wfops's entries to the existing {rel} (the rest is unchanged).")
    say("")
    say("Next steps:")
    if target.resolve() != Path.cwd().resolve():
        say(f"  cd {shlex.quote(str(target))}")
    say("  wfops validate                      # syntax, schema and static checks")
    say("  wfops compile                       # write wfops.lock (commit it)")
    if made.deployment == "hello.local":
        say("  wfops run hello.local --input name=you")
    else:
        say(f"  wfops run {made.deployment}")
    say(f"  wfops graph {made.workflow}".ljust(38) + "# the workflow as a Mermaid diagram")
    if not made.in_git:
        say("  git init                            # pre-commit and CI need a git repository")
    say("  pip install pre-commit              # the hooks' runner (it does not come with wfops)")
    say("  pre-commit install                  # validate, check and test on every commit")
    say(f"CI installs wfops with: pip install {shlex.quote(made.wfops_spec)}")
    if made.wfops_spec.startswith("wfops @ file:"):
        say("  (a path on this machine: a CI runner cannot reach it; set another with --wfops-spec)")
    return 0
