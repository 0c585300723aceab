"""`wfops schema [--kind workflow|deployment|sources]`: print a file format's JSON Schema."""

from __future__ import annotations

import sys


def run(*, kind: str = "workflow") -> int:
    # deferred: wfops.api imports asyncio (~33 ms); importing the CLI's modules stays cheap
    from wfops.api import schema

    sys.stdout.write(schema(kind))
    return 0
