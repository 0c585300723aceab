"""`wfops schema [--kind workflow|deployment|sources]`: print a file format's JSON Schema."""

from __future__ import annotations

import sys

from wfops.api import schema


def run(*, kind: str = "workflow") -> int:
    sys.stdout.write(schema(kind))
    return 0
