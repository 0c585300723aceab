"""wfops: declarative workflows in git, compiled to locked artifacts, run durably.

The public API for python sources is `wfops.node` and `wfops.Result`. They are
loaded lazily so that `import wfops.cli` stays cheap for pre-commit hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Result", "node", "__version__"]

if TYPE_CHECKING:
    from wfops.sources.python import Result, node


def __getattr__(name: str) -> Any:
    if name in ("node", "Result"):
        from wfops.sources import python

        return getattr(python, name)
    raise AttributeError(f"module 'wfops' has no attribute {name!r}")
