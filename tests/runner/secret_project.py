"""A project whose MCP server prints its token to stderr and dies, and whose python source
fails to import quoting the same token (tests/runner/test_secret_channels.py, tests/mcp)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write
from tests.mcp.helpers import SERVERS
from wfops.redact import MASK

TOKEN = "mcpTok-77QQzz"
LEAKY = str(SERVERS / "leaky.py")

# The server dies on every call: with no retry left and no `catch` the run stops resumable.
DIES = """
name: dies
input: {type: object}
steps:
  - {id: call, uses: leaky.leak, retry: {attempts: 2, backoff: 0}, next: end}
"""

# The same death caught: the error (quoting the stderr) is saved into state and stored.
CAUGHT = """
name: caught
input: {type: object}
state: {problem: {type: object}}
output: {problem: $state.problem}
steps:
  - {id: call, uses: leaky.leak, retry: {attempts: 1}, catch: {next: done, save: state.problem}, next: end}
  - {id: done, end: ok}
"""


# A python source whose import fails quoting the token: only the reporters stand between
# the exception's text and the output (no run, no engine).
OPS = """
import os

if os.environ.get("LEAKY_IMPORT"):
    raise RuntimeError("cannot log in: dying with " + os.environ["MCP_TOKEN"])
"""


def make_leaky_project(root: Path) -> Path:
    """The project; compile it with MCP_TOKEN set (and LEAKY_MODE, LEAKY_IMPORT unset)."""
    return write(root, {
        "sources.yaml": f"""
            sources:
              ops: {{kind: python, module: ops}}
              leaky:
                kind: mcp
                command: [python, {LEAKY}]
                env: {{MCP_TOKEN: "${{MCP_TOKEN}}", LEAKY_MODE: "${{LEAKY_MODE:-call}}"}}
            """,
        "ops.py": OPS, "workflows/dies.yaml": DIES, "workflows/caught.yaml": CAUGHT,
        "deployments/dies.yaml": "name: dies.local\nworkflow: dies\nsecrets: [MCP_TOKEN]\n",
        "deployments/caught.yaml": "name: caught.local\nworkflow: caught\nsecrets: [MCP_TOKEN]\n",
    })


def quoted(text: str) -> bool:
    """The server's stderr line is quoted, masked: the message still says what it printed."""
    return f"dying with {MASK}" in text
