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
    "step_logs": ("read_trace",),
    "capabilities": ("list_capabilities",),
    "capability": ("describe_capability",),
    "call": ("call_capability",),
    "graph": ("draw_graph",),
    "schedules": ("list_schedules",),
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
    "tick": "starts the scheduled runs that are due: an outside scheduler's call every minute "
            "(`wfops schedule tick`); an agent starts a run with start_run",
    "schedule_workflow": "writes the generated GitHub Actions workflow (`wfops ci schedule`); "
                         "list_schedules shows the schedules it is made from",
    "cache_entries": "the step cache is the operator's (`wfops cache list`); read_trace marks each step "
                     "served from it, with its origin",
    "cache_entry": "the step cache is the operator's (`wfops cache show`); read_trace marks each step "
                   "served from it, with its origin",
    "clear_cache": "deletes cached results in bulk: a person's housekeeping (`wfops cache clear`)",
    "find_runs": "the web UI's history page; list_runs serves the same runs",
    "trace_view": "the web UI's run page; read_trace serves the same trace",
    "run_graph": "the web UI's graph of a run; draw_graph and read_trace serve the same facts",
    "overview": "the web UI's project page; list_project and check serve the same facts",
    "resolve_run": "`last` and `last:DEPLOYMENT` are taken wherever a tool takes a run_id",
    "close": "closes the store connection a Project keeps: the server keeps its own for its lifetime",
    "step_summary": "the GitHub Actions job summary of `wfops run`; show_run and read_trace hold the same facts",
}
