"""What `wfops compile` changed compared with the previous lock, in a few short lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wfops.lockfile import Lock, LockedContract


def lock_changes(old: Lock | Mapping[str, Any] | None, new: Lock | Mapping[str, Any]) -> list[str]:
    """`old` is the lock read before compiling (or None), `new` what compile writes (its dict is parsed)."""
    if old is None:
        return ["new lock"]
    before_lock, after_lock = _typed(old), _typed(new)
    lines: list[str] = []
    sections: tuple[tuple[str, Mapping[str, Any], Mapping[str, Any], str], ...] = (
        ("workflow", before_lock.workflows, after_lock.workflows, "hash"),
        ("deployment", before_lock.deployments, after_lock.deployments, "artifact"))
    for singular, before, after, key in sections:
        for name in sorted(set(after) - set(before)):
            lines.append(f"+ {singular} {name}")
        for name in sorted(set(before) - set(after)):
            lines.append(f"- {singular} {name}")
        for name in sorted(set(before) & set(after)):
            if before[name] != after[name]:
                old_hash, new_hash = getattr(before[name], key), getattr(after[name], key)
                detail = f" {str(old_hash)[:12]} -> {str(new_hash)[:12]}" if old_hash != new_hash else ""
                lines.append(f"~ {singular} {name}{detail}")
    before_caps = _contracts(before_lock)
    after_caps = _contracts(after_lock)
    for ref in sorted(set(after_caps) - set(before_caps)):
        lines.append(f"+ capability {ref}")
    for ref in sorted(set(before_caps) - set(after_caps)):
        lines.append(f"- capability {ref}")
    for ref in sorted(set(before_caps) & set(after_caps)):
        if before_caps[ref] != after_caps[ref]:
            lines.append(f"~ capability {ref}")
    return lines


def _typed(lock: Lock | Mapping[str, Any]) -> Lock:
    return lock if isinstance(lock, Lock) else Lock.from_dict(dict(lock))


def _contracts(lock: Lock) -> dict[str, LockedContract]:
    return {f"{source_id}.{name}": contract
            for source_id, source in lock.sources.items()
            for name, contract in source.capabilities.items()}
