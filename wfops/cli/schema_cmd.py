"""`wfops schema [--kind workflow|deployment|sources]`: print a file format's JSON Schema."""

from __future__ import annotations

import sys


def run(*, kind: str = "workflow") -> int:
    from wfops.api import schema

    sys.stdout.write(schema(kind))
    return 0
