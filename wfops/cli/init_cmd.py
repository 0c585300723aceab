"""`wfops init [DIR] [--force]`: scaffold a project that validates, compiles, checks and runs as is."""

from __future__ import annotations

import shlex
from pathlib import Path

from wfops.api import init
from wfops.api.scaffold import SCHEMA_DIR
from wfops.cli.output import say


def run(*, directory: str = ".", force: bool = False) -> int:
    made = init(directory, force=force)
    target = made.directory
    say(f"Created a wfops project in {target}:")
    for rel in made.written:
        if not rel.startswith(SCHEMA_DIR):
            say(f"  {rel}")
    say(f"  {SCHEMA_DIR}/ (JSON Schemas for editors; refresh with `wfops schema --kind K`)")
    say("")
    say("Next steps:")
    if target.resolve() != Path.cwd().resolve():
        say(f"  cd {shlex.quote(str(target))}")
    say("  wfops validate                      # syntax, schema and static checks")
    say("  wfops compile                       # write wfops.lock (commit it)")
    say("  wfops run hello.local --input name=you")
    say("  wfops graph hello                   # the workflow as a Mermaid diagram")
    if not made.in_git:
        say("  git init                            # pre-commit and CI need a git repository")
    say("  pre-commit install                  # validate and check on every commit")
    return 0
