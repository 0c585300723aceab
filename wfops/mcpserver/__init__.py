"""`wfops mcp`: the project served to MCP clients over stdio.

    models.py      the typed results every tool returns (the client gets structured content)
    operations.py  plain functions, one per tool, calling the core API (`wfops.api.Project`)
    advice.py      `next_steps`: what to do after each result
    app.py         the MCPServer: tools as thin async wrappers, one error boundary
"""
