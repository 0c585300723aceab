"""A small project for the CLI's everyday tests: a python node that prints and can fail,
a foreach over its input's items, compiled and ready to run (no MCP source: fast)."""

from __future__ import annotations

from pathlib import Path

from tests.harness import run_cli

NODE = '''
from __future__ import annotations

import logging
import os
import sys
import time

from pydantic import BaseModel, Field

import wfops

time.sleep(float(os.environ.get("LOOP_IMPORT_SLEEP", "0")))  # a slow start-up, when a test wants one

class ItemIn(BaseModel):
    n: int = Field(description="The item.")


class ItemOut(BaseModel):
    n: int = Field(description="The item, doubled.")


@wfops.node
def work(payload: ItemIn) -> ItemOut:
    """Print, log, and fail on a negative item."""
    print(f"working on {payload.n}")
    time.sleep(float(os.environ.get("LOOP_ITEM_SLEEP", "0")))
    if payload.n == 7:
        print("the token is " + os.environ.get("LOOP_TOKEN", "unset"))
    if payload.n == 8:
        print("x" * 200_000)
    print(f"stderr note {payload.n}", file=sys.stderr)
    logging.getLogger("loop").warning("logged %s", payload.n)
    if payload.n < 0 or os.environ.get("LOOP_FAIL"):
        raise ValueError(f"negative item {payload.n}")
    return ItemOut(n=payload.n * 2)
'''

WORKFLOW = """name: loop
version: 1
description: Work on every item.
input:
  type: object
  properties:
    items: {type: array, items: {type: integer}}
state:
  done: {type: array}
output:
  done: $state.done
steps:
  - id: each
    foreach: $input.items
    uses: ops.work
    with: {n: $item}
    save: state.done
    next: end
"""


def write_loop_project(root: Path, *, items: int = 5, compile_it: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "nodes").mkdir(exist_ok=True)
    (root / "nodes" / "__init__.py").write_text("")
    (root / "nodes" / "ops.py").write_text(NODE)
    (root / "sources.yaml").write_text("sources:\n  ops: {kind: python, module: nodes.ops}\n")
    (root / "workflows").mkdir(exist_ok=True)
    (root / "workflows" / "loop.yaml").write_text(WORKFLOW)
    (root / "deployments").mkdir(exist_ok=True)
    listed = ", ".join(str(i) for i in range(1, items + 1))
    (root / "deployments" / "loop.local.yaml").write_text(
        f"name: loop.local\nworkflow: loop\nbindings: {{ops: ops}}\ninput: {{items: [{listed}]}}\n")
    (root / "deployments" / "other.local.yaml").write_text(
        "name: other.local\nworkflow: loop\nbindings: {ops: ops}\ninput: {items: [1]}\n")
    if compile_it:
        compiled = run_cli("compile", cwd=root)
        assert compiled.code == 0, compiled.stdout + compiled.stderr
    return root
