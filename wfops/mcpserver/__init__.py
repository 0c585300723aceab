"""`wfops mcp`: the project served to MCP clients over stdio (SPEC §9).

    models.py      the typed results every tool returns (the client gets structured content)
    operations.py  plain functions, one per tool, calling what the CLI verbs call
    inline.py      validating YAML text given inline, in the context of the project
    advice.py      `next_steps`: what to do after each result
    app.py         the MCPServer: tools as thin async wrappers, one error boundary
"""
