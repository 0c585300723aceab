"""What `wfops compile` changed compared with the previous lock, in a few short lines."""

from __future__ import annotations

from typing import Any


def lock_changes(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    if old is None:
        return ["new lock"]
    lines: list[str] = []
    for section, key in (("workflows", "hash"), ("deployments", "artifact")):
        before, after = old.get(section, {}), new.get(section, {})
        singular = section[:-1]
        for name in sorted(set(after) - set(before)):
            lines.append(f"+ {singular} {name}")
        for name in sorted(set(before) - set(after)):
            lines.append(f"- {singular} {name}")
        for name in sorted(set(before) & set(after)):
            if before[name] != after[name]:
                old_hash, new_hash = before[name].get(key), after[name].get(key)
                detail = f" {str(old_hash)[:12]} -> {str(new_hash)[:12]}" if old_hash != new_hash else ""
                lines.append(f"~ {singular} {name}{detail}")
    before_caps = _contracts(old)
    after_caps = _contracts(new)
    for ref in sorted(set(after_caps) - set(before_caps)):
        lines.append(f"+ capability {ref}")
    for ref in sorted(set(before_caps) - set(after_caps)):
        lines.append(f"- capability {ref}")
    for ref in sorted(set(before_caps) & set(after_caps)):
        if before_caps[ref] != after_caps[ref]:
            lines.append(f"~ capability {ref}")
    return lines


def _contracts(lock: dict[str, Any]) -> dict[str, Any]:
    return {f"{source_id}.{name}": entry
            for source_id, source in lock.get("sources", {}).items()
            for name, entry in source.get("capabilities", {}).items()}
