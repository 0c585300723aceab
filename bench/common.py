"""What the bench scripts share: the `--smoke` flag, child CPU time, optional peers."""

from __future__ import annotations

import argparse
import importlib.util
import resource

SMOKE_HELP = ("the same code paths at the smallest sizes, one repeat: what CI runs so that no "
              "script rots (its figures mean nothing)")


def add_smoke(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)


def child_cpu() -> float:
    """CPU seconds (user + system) of the reaped children so far: steadier than wall time
    on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peer_available(peer: str, modules: tuple[str, ...], *, smoke: bool) -> bool:
    """Whether the peer a figure compares with (from the `bench` extra) can be imported.
    In smoke mode a missing one is skipped with one line; a real measurement stops."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            if smoke:
                print(f"skipped: {peer} ({module} is not installed; pip install -e '.[bench]')")
                return False
            raise SystemExit(f"error: {peer} needs {module}, which is not installed: pip install -e '.[bench]'")
    return True
