"""Print a pip constraints file pinning each runtime dependency to its declared floor
(`name>=X` in pyproject.toml becomes `name==X`): CI installs wfops with it in a fresh
virtualenv, so the lowest versions wfops allows are the ones tested."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path


def floors(pyproject: Path) -> list[str]:
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = []
    for dep in deps:
        found = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([^,;\s]+)\s*", dep)
        if not found:
            sys.exit(f"no plain floor (`name>=X`) in dependency {dep!r}")
        pins.append(f"{found.group(1).split('[')[0]}=={found.group(2)}")
    return pins


if __name__ == "__main__":
    print("\n".join(floors(Path(__file__).resolve().parent.parent / "pyproject.toml")))
