"""Small helpers every verb shares for printing."""

from __future__ import annotations

import json
import sys
from typing import Any

from wfops.errors import UsageError
from wfops.redact import mask, masked
from wfops.report import FORMATS


def print_json(value: Any) -> None:
    # allow_nan=False: nothing wfops prints may be JSON no other reader accepts.
    sys.stdout.write(json.dumps(masked(value), indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False,
                                default=str) + "\n")


def compact(value: Any, width: int = 100) -> str:
    """A value as one line of JSON, cut to `width` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[:width - 1] + "…"


def say(text: str = "") -> None:
    sys.stdout.write(mask(text) + "\n")


def warn(text: str) -> None:
    sys.stderr.write(mask(text) + "\n")


def check_format(format: str) -> None:
    """Refuse an unknown report format before any work is done."""
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}", hint="use one of: " + ", ".join(FORMATS))
