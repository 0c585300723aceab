"""Small helpers every verb shares for printing."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False, default=str) + "\n")


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def warn(text: str) -> None:
    sys.stderr.write(text + "\n")
