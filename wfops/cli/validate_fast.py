"""A direct route to `wfops validate` for its plain forms.

pre-commit runs `wfops validate` on every commit. typer builds a pydantic
TypeAdapter for every parameter of the command it runs, which costs ~100 ms
before any work. The plain forms (`validate [PATHS...] [--format F] [--project P]`)
are parsed here instead; anything else (help, unknown or combined flags) returns
None and goes through typer as usual, so usage errors read the same.

The whole project, unchanged since the last validate (the pre-commit case), is answered
from the cache by `wfops.fastpath.replay` before the rest of the command is imported.
"""

from __future__ import annotations

import sys
from typing import Any

from wfops.fastpath.replay import replay_project_report

_VALUED = {"--format": "format", "-f": "format", "--project": "project"}


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of `validate_cmd.run`, or None when typer should decide."""
    if not argv or argv[0] != "validate":
        return None
    options: dict[str, Any] = {"paths": [], "format": "text", "project": None}
    index = 1
    while index < len(argv):
        token = argv[index]
        name, eq, value = token.partition("=")
        if token in _VALUED:
            if index + 1 >= len(argv):
                return None
            options[_VALUED[token]] = argv[index + 1]
            index += 2
            continue
        if eq and name in ("--format", "--project"):
            options[_VALUED[name]] = value
        elif token.startswith("-"):
            return None
        else:
            options["paths"].append(token)
        index += 1
    return options


def fast_validate(argv: list[str]) -> int | None:
    options = parse(argv)
    if options is None:
        return None
    if not options["paths"]:
        hit = replay_project_report(options["project"], options["format"])
        if hit is not None:
            sys.stdout.write(hit[0])
            return 0 if hit[1] else 1
    # deferred: cache-hit path (a hit answers above without the API's Project or the reporters)
    from wfops.cli.validate_cmd import run

    return run(**options)
