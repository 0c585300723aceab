"""The execution engine. It knows nothing of YAML files, SQLite or MCP: it takes
compiled workflow models, a capability resolver and a checkpoint sink."""
