"""Which tool serves each verb of the core API (`Project`'s public methods), or why none does.

A test holds this table to `Project` and to the tools the server lists: a new verb with no
tool and no reason here fails it. `docs/mcp.md` shows the same table to users.
"""

from __future__ import annotations

#: Project method -> the tool(s) that serve it.
TOOLS: dict[str, tuple[str, ...]] = {
    "validate": ("validate",),
    "compile": ("compile",),
    "check": ("check",),
    "test": ("run_tests",),
    "deployments": ("list_project",),
    "list_project": ("list_project",),
    "read_file": ("read_file",),
    "write_file": ("write_file",),
    "patch_file": ("patch_workflow",),
    "new_workflow": ("new_workflow",),
    "new_test": ("new_test",),
    "run": ("start_run", "run_deployment"),
    "resume": ("resume_run",),
    "fork": ("fork_run",),
    "cancel": ("cancel_run",),
    "runs": ("list_runs",),
    "get_run": ("show_run", "wait_run"),
    "run_value": ("show_run",),
    "trace": ("read_trace",),
    "capabilities": ("list_capabilities",),
    "capability": ("describe_capability",),
    "call": ("call_capability",),
    "graph": ("draw_graph",),
}

#: Project members that no tool serves, and why.
NO_TOOL: dict[str, str] = {
    "nearest": "finds a project from a folder: the server serves the one project it was started for",
    "acting_for": "the server itself acts for its client (held sources), not a verb a client calls",
    "client": "who the server acts for, not a verb",
    "root": "the project's folder: list_project returns it as root",
    "db_path": "where the store is: the server's own setting (`wfops mcp --db`)",
    "sources_awaiting_approval": "a person approves sources a client wrote; write results list them in "
                                 "awaiting_approval and tools ask through elicitation",
    "approve_source": "a person's yes (`wfops sources approve ID`): an agent cannot approve its own sources",
    "prune": "deletes run history in bulk: a person's housekeeping (`wfops runs prune`)",
    "remove_run": "deletes a run: a person's housekeeping (`wfops runs rm`)",
    "copy_runs": "copies the history into another store: an operator's task (`wfops runs copy`)",
    "step_summary": "the GitHub Actions job summary of `wfops run`; show_run and read_trace hold the same facts",
}
