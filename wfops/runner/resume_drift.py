"""Drift at resume time: a run resumed days later may meet MCP servers whose tools changed.

`wfops run` compares live MCP contracts with wfops.lock before it starts (lock/gate.py);
a resume applies the same rule to the MCP capabilities the run's stored workflows call,
with the deployment's `drift:` policy as the lock records it. Python and std sources are
imported from the project as it is now and are not compared here (their drift is what
`wfops check` reports). No lock, or a capability the lock does not hold, is not drift.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wfops.diagnostics import Diagnostic, error, warning
from wfops.errors import WfopsError
from wfops.lock.contract_diff import describe_contract_change
from wfops.lock.drift import LockLines
from wfops.lockfile import LOCK_NAME, lock_path, read_lock
from wfops.runner.sources import used_refs


def resumed_contract_drift(root: Path, deployment: str | None, workflows: Iterable[Any],
                           bindings: Mapping[str, str], opened: Mapping[str, Any]
                           ) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(refusals, warnings) for the MCP capabilities the resumed run uses."""
    try:
        lock = read_lock(root)
    except WfopsError:
        return [], []  # a corrupt lock is `wfops check`'s to report; the run's artifacts are stored
    if lock is None:
        return [], []
    make = error if lock.drift_policy(deployment or "") != "warn" else warning
    lines = LockLines(lock_path(root).read_text(encoding="utf-8"))
    found: list[Diagnostic] = []
    for ref in used_refs(workflows):
        logical, _, name = ref.partition(".")
        source_id = bindings.get(logical, logical)
        source = opened.get(source_id)
        if source is None or source.kind != "mcp":
            continue
        locked = lock.contract(source_id, name)
        if locked is None:
            continue
        live = source.capabilities().get(name)
        where = lines.at("sources", source_id)
        if live is None:
            found.append(make("capability-missing", f"{source_id}.{name} is in wfops.lock but source "
                              f"{source_id!r} no longer offers it (the resumed run calls it)", LOCK_NAME, where,
                              hint=f"restore `{name}` in source {source_id!r}; see `wfops check --live`",
                              source=source_id, deployment=deployment))
        elif live.contract_hash != locked.hash:
            changes = "; ".join(describe_contract_change(locked.to_dict(), live.contract))
            found.append(make("capability-drift", f"{source_id}.{name} changed since wfops.lock: {changes} "
                              "(the resumed run calls it)", LOCK_NAME, where, source=source_id, deployment=deployment,
                              hint="revert the source, or set `drift: warn` in the deployment and `wfops compile`; "
                                   "`wfops check --live` shows the change"))
    return [d for d in found if d.is_error], [d for d in found if not d.is_error]
