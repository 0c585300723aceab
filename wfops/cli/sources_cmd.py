"""`wfops sources list|approve`: a person's yes for the sources an MCP client wrote.

`wfops mcp` holds every source declaration its client adds or changes in sources.yaml
(an MCP server's command, a python module) until a person approves it here: `approve`
shows the declaration as it stands and records the yes for exactly that declaration.
"""

from __future__ import annotations

from wfops.api import Project
from wfops.api.approvals import APPROVE_COMMAND
from wfops.cli.output import print_json, say


def run(*, action: str, source: str | None = None, json_out: bool = False, project: str | None = None) -> int:
    found = Project(project)
    if action == "list":
        held = found.sources_awaiting_approval()
        if json_out:
            print_json([{"source": d.source, "kind": d.kind, "declaration": d.declaration} for d in held])
            return 0
        if not held:
            say("no source awaits approval")
        for d in held:
            say(f"{d.source} ({d.kind}): {d.shown()}")
            say(f"  approve: {APPROVE_COMMAND} {d.source}")
        return 0
    if action == "approve":
        waited = source in {d.source for d in found.sources_awaiting_approval()}
        approved = found.approve_source(source or "", by=APPROVE_COMMAND)
        if json_out:
            print_json({"source": approved.source, "kind": approved.kind, "declaration": approved.declaration,
                        "approved": True, "waited": waited})
            return 0
        say(f"{approved.source} ({approved.kind}): {approved.shown()}")
        if not waited:
            say("it did not wait for approval: no MCP client wrote it as declared, or a person approved it")
        say(f"approved: `wfops mcp` may start or import {approved.source} as declared above; "
            "a change to it needs a new approval")
        return 0
    raise ValueError(f"unknown sources action {action!r}")
