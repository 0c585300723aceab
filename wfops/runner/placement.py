"""The contracts a run's workers must match, and the executor made with them.

Workers compare their code with the lock's contracts under `drift: fail`; under `drift: warn` (drift
accepted) and without a lock, with the contracts the driver itself loaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from wfops.errors import WfopsError
from wfops.sources.base import Source
from wfops.sources.executor import Executor, ExecutorChoice, make_executor


def locked_contracts(root: Path, deployment: str | None, sources: Mapping[str, Source],
                     ids: Iterable[str]) -> dict[str, str]:
    """Concrete ref -> the lock's contract hash, for the python sources the run uses."""
    # deferred: record-hit path; only a run placed on another executor reads the lock
    from wfops.lockfile import read_lock

    try:
        lock = read_lock(root)
    except WfopsError:
        return {}  # a corrupt lock is the gate's (and `wfops check`'s) to report
    if lock is None or lock.drift_policy(deployment) == "warn":
        return {}
    hashes: dict[str, str] = {}
    for source_id in ids:
        source, locked = sources.get(source_id), lock.sources.get(source_id)
        if source is None or source.kind != "python" or locked is None:
            continue
        hashes.update({f"{source_id}.{name}": c.hash for name, c in locked.capabilities.items() if c.hash})
    return hashes


def executor_for(choice: ExecutorChoice, root: Path, deployment: str | None, sources: Mapping[str, Source],
                 ids: Iterable[str]) -> Executor:
    ids = list(ids)
    expected = locked_contracts(root, deployment, sources, ids) if choice.kind != "local" else {}
    return make_executor(choice, root, expected)
