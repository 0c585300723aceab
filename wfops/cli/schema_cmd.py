"""`wfops schema [--kind workflow|deployment|sources]`: print a file format's JSON Schema."""

from __future__ import annotations

import sys

from wfops.errors import UsageError


def run(*, kind: str = "workflow") -> int:
    from wfops.model.json_schema import KINDS, schema_text

    if kind not in KINDS:
        raise UsageError(f"unknown schema kind {kind!r}", hint="use --kind " + ", --kind ".join(KINDS))
    sys.stdout.write(schema_text(kind))
    return 0
