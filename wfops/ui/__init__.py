"""`wfops ui`: the run history, runs, graphs and the project in a browser (see docs/ui.md).

A face like the MCP server: it renders the core API (`wfops.Project`) as JSON for the
pages' own script, and every action is a `Project` method. The pages and their script and
styles ship in `static/`; no value from a run or the project is ever put into markup by the
server (the script sets it as text).
"""
