"""Compare a fresh in-memory compile with the committed wfops.lock.

Each finding points at the node responsible: the workflow step that changed, the
deployment key that changed, the step that calls a drifted capability. Things
that exist only in the lock (a removed workflow) point at their line in wfops.lock.

The last check is a catch-all: if nothing specific was found but the lock still
differs from what `wfops compile` would write, that is a `stale-lock` too, so a
clean `check` always means "compile would not change a byte".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wfops.diagnostics import Diagnostic, error, warning
from wfops.lock.build import CompiledProject, Usage, source_kind
from wfops.lock.contract_diff import describe_contract_change
from wfops.lockfile import LOCK_NAME, Lock, LockedWorkflow, contract_entry

if TYPE_CHECKING:
    from wfops.compiler.validate import Validation
    from wfops.sources.base import Capability

COMPILE_HINT = "run `wfops compile` and commit wfops.lock"


@dataclass(frozen=True)
class Scope:
    """What a comparison looks at: everything (None fields) or one deployment's tree."""

    workflows: frozenset[str] | None = None
    deployments: frozenset[str] | None = None

    def has_workflow(self, name: str) -> bool:
        return self.workflows is None or name in self.workflows

    def has_deployment(self, name: str) -> bool:
        return self.deployments is None or name in self.deployments


EVERYTHING = Scope()


class LockLines:
    """Positions of entries inside the lock text (it is written with indent 2, sorted keys)."""

    def __init__(self, text: str | None) -> None:
        self.lines = (text or "").splitlines()

    def at(self, section: str, name: str | None = None) -> tuple[int, int]:
        head = f'  "{section}": {{'
        for index, line in enumerate(self.lines):
            if line.startswith(head):
                if name is None:
                    return index + 1, 3
                wanted = f"    {json.dumps(name, ensure_ascii=False)}: "
                for offset, inner in enumerate(self.lines[index + 1:], start=index + 2):
                    if inner.startswith(wanted):
                        return offset, 5
                    if inner.startswith("  }"):
                        break
                return index + 1, 3
        return 1, 1


def compare(validation: Validation, compiled: CompiledProject, lock: Lock | None,
            lock_text: str | None, scope: Scope = EVERYTHING) -> list[Diagnostic]:
    """Every difference between the project as it is now and the committed lock."""
    if lock is None:
        return [error("stale-lock", f"there is no {LOCK_NAME}: the project has never been compiled",
                      LOCK_NAME, hint="run `wfops compile` and commit wfops.lock")]
    lines = LockLines(lock_text)
    found: list[Diagnostic] = []
    found += compare_contracts(validation, compiled.usages, validation.catalog, lock, lines, scope,
                               drift_policy=None)
    found += _compare_workflows(validation, compiled, lock, lines, scope)
    found += _compare_deployments(validation, compiled, lock, lines, scope)
    found += pin_mismatches(validation, compiled, scope)
    # A project with errors (e.g. an MCP source that would not start) cannot say what
    # `wfops compile` would write, so a catch-all stale-lock there would only be noise.
    if scope is EVERYTHING and validation.ok and not any(d.is_error for d in found):
        found += _catch_all(compiled.to_lock(), lock)
    return found


def compare_contracts(validation: Validation, usages: Mapping[tuple[str, str], Iterable[Usage]],
                      catalog: Mapping[str, Mapping[str, Capability]], lock: Lock,
                      lines: LockLines, scope: Scope, drift_policy: str | None) -> list[Diagnostic]:
    """Drift of the capabilities in use, against the contracts the lock recorded.

    `drift_policy` "warn" makes drift findings warnings (a deployment's `drift: warn`).
    """
    found: list[Diagnostic] = []
    for (source_id, name), users in sorted(usages.items()):
        users = [u for u in users if scope.has_workflow(u.workflow)
                 and (u.deployment is None or scope.has_deployment(u.deployment))]
        if not users:
            continue
        first, who = users[0], _who(users)
        locked = lock.contract(source_id, name)
        ref = f"{source_id}.{name}"
        if source_id not in catalog and source_id not in validation.sources:
            if lock.source(source_id) is not None and not _declared(validation, source_id):
                found.append(_drift(drift_policy, "source-missing",
                                    f"source {source_id!r} is in {LOCK_NAME} but no longer exists; {who} call(s) {ref}",
                                    first, source_id, "declare it again in sources.yaml, or change the steps "
                                    "that use it and run `wfops compile`"))
            continue  # an unknown source without a lock entry: validation reports it
        current = catalog.get(source_id, {}).get(name)
        if locked is None:
            if current is not None or source_kind(validation, source_id) != "mcp":
                found.append(error("stale-lock", f"{ref} (used by {who}) is not in {LOCK_NAME}",
                                   first.file, first.at, COMPILE_HINT, **_about(first, source_id)))
            continue
        if current is None:
            if source_kind(validation, source_id) == "mcp" and source_id not in catalog:
                continue  # not contacted: nothing to compare
            found.append(_drift(drift_policy, "capability-missing",
                                f"{ref} is in {LOCK_NAME} but source {source_id!r} no longer offers it; "
                                f"used by {who}", first, source_id,
                                f"restore `{name}` in source {source_id!r}, or change the steps that use it"))
            continue
        fresh = contract_entry(current)
        if fresh["hash"] != locked.hash:
            changes = "; ".join(describe_contract_change(locked.to_dict(), fresh))
            found.append(_drift(drift_policy, "capability-drift",
                                f"{ref} changed since {LOCK_NAME}: {changes} (used by {who})", first, source_id,
                                "if the change is intended, update the steps that use it and run "
                                "`wfops compile`; otherwise revert the source"))
    return found


def _declared(validation: Validation, source_id: str) -> bool:
    """Declared but not loaded (an import error) is validation's finding, not a missing source."""
    sources = validation.project.sources
    return sources is not None and source_id in sources.model.sources


def _drift(policy: str | None, code: str, message: str, usage: Usage, source_id: str, hint: str) -> Diagnostic:
    make = warning if policy == "warn" else error
    return make(code, message, usage.file, usage.at, hint, **_about(usage, source_id))


def _about(usage: Usage, source_id: str) -> dict[str, str | None]:
    """The subject of a contract finding: the source, and the step it points at (the first user)."""
    return {"source": source_id, "workflow": usage.workflow, "step": usage.step, "deployment": usage.deployment}


def _who(users: list[Usage]) -> str:
    labels = sorted({u.label for u in users})
    return ", ".join(f"`{label}`" for label in labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")


def _compare_workflows(validation: Validation, compiled: CompiledProject, lock: Lock,
                       lines: LockLines, scope: Scope) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    locked = lock.workflows
    for name, entry in compiled.workflows.items():
        if not scope.has_workflow(name):
            continue
        loaded = validation.project.workflows[name]
        old = locked.get(name)
        if old is None:
            found.append(error("stale-lock", f"workflow `{name}` is not in {LOCK_NAME}", loaded.file,
                               loaded.doc.at(("name",)), COMPILE_HINT, workflow=name))
        elif old.hash != entry["hash"]:
            what, path = _what_changed(entry, old)
            found.append(error("stale-lock", f"workflow `{name}` changed since {LOCK_NAME}: {what} "
                               f"(artifact {_short(old.hash)} -> {_short(entry['hash'])})",
                               loaded.file, loaded.doc.at(path), COMPILE_HINT, workflow=name,
                               step=_step_id(loaded, path)))
    for name in sorted(set(locked) - set(compiled.workflows)):
        if scope.has_workflow(name) and not _still_there(validation, locked[name].file):
            found.append(error("stale-lock", f"workflow `{name}` is in {LOCK_NAME} but no longer in "
                               "the project", LOCK_NAME, lines.at("workflows", name), COMPILE_HINT, workflow=name))
    return found


def _step_id(loaded: Any, path: tuple[Any, ...]) -> str | None:
    """The id of the step a workflow path points into, if it does."""
    if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int):
        return str(loaded.model.steps[path[1]].id)
    return None


def _still_there(validation: Validation, file: str | None) -> bool:
    """A file that exists but failed to load is reported by validation, not as removed."""
    return file in validation.project.broken_files


def _what_changed(entry: dict[str, Any], old: LockedWorkflow) -> tuple[str, tuple[Any, ...]]:
    """Describe the changed parts of a workflow, and the path of the first one in the file."""
    new_parts, old_parts = entry.get("parts", {}), old.parts
    steps = [s.get("id") for s in (entry.get("normalized") or {}).get("steps", [])]
    said: list[str] = []
    path: tuple[Any, ...] = ("name",)
    for index, step_id in enumerate(steps):
        key = f"step:{step_id}"
        if key not in old_parts:
            said.append(f"step `{step_id}` added")
        elif old_parts[key] != new_parts.get(key):
            said.append(f"step `{step_id}` changed")
        else:
            continue
        if path == ("name",):
            path = ("steps", index)
    for key in sorted(old_parts):
        if key.startswith("step:") and key not in new_parts:
            said.append(f"step `{key[5:]}` removed")
    for key in sorted(set(new_parts) | set(old_parts)):
        if not key.startswith("step:") and key != "order" and new_parts.get(key) != old_parts.get(key):
            said.append(f"`{key}` changed")
            if path == ("name",) and key != "name":
                path = (key,)
    if not said and new_parts.get("order") != old_parts.get("order"):
        said.append("the steps were reordered")
        path = ("steps",)
    if entry.get("subworkflows", {}) != old.subworkflows:
        new_children = entry.get("subworkflows", {})
        changed = sorted(k for k in set(new_children) | set(old.subworkflows)
                         if new_children.get(k) != old.subworkflows.get(k))
        said.append("subworkflow " + ", ".join(f"`{c}`" for c in changed) + " changed")
    return ", ".join(said) or "its content changed", path


def _short(digest: Any) -> str:
    return str(digest)[:12] if digest else "none"


_DEPLOYMENT_KEYS = (("workflow", "workflow"), ("pin", "workflow"), ("artifact", "workflow"),
                    ("bindings", "bindings"), ("drift", "drift"), ("secrets", "secrets"),
                    ("schedule", "schedule"))


def _compare_deployments(validation: Validation, compiled: CompiledProject, lock: Lock,
                         lines: LockLines, scope: Scope) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    locked = lock.deployments
    for name, entry in compiled.deployments.items():
        if not scope.has_deployment(name):
            continue
        loaded = validation.project.deployments[name]
        old = locked.get(name)
        if old is None:
            found.append(error("stale-lock", f"deployment `{name}` is not in {LOCK_NAME}", loaded.file,
                               loaded.doc.at(("name",)), COMPILE_HINT, deployment=name, workflow=entry["workflow"]))
            continue
        changed = [(key, node) for key, node in _DEPLOYMENT_KEYS if old.value(key) != entry.get(key)]
        workflow_entry = lock.workflow(entry["workflow"])
        if entry.get("artifact") is None and workflow_entry is not None \
                and _still_there(validation, workflow_entry.file):
            # Its workflow's file is broken: validation reports that, the artifact is not "changed".
            changed = [(key, node) for key, node in changed if key != "artifact"]
        if not changed:
            continue
        words = []
        for key, _ in changed:
            if key == "artifact":
                words.append(f"its workflow `{entry['workflow']}` changed (artifact {_short(old.artifact)} "
                             f"-> {_short(entry.get(key))})")
            else:
                words.append(f"`{key}` changed")
        node = changed[0][1]
        found.append(error("stale-lock", f"deployment `{name}` changed since {LOCK_NAME}: " + ", ".join(words),
                           loaded.file, loaded.doc.at((node,)), COMPILE_HINT, deployment=name,
                           workflow=entry["workflow"]))
    for name in sorted(set(locked) - set(compiled.deployments)):
        if scope.has_deployment(name) and not _still_there(validation, locked[name].file):
            found.append(error("stale-lock", f"deployment `{name}` is in {LOCK_NAME} but no longer in "
                               "the project", LOCK_NAME, lines.at("deployments", name), COMPILE_HINT,
                               deployment=name))
    return found


def pin_mismatches(validation: Validation, compiled: CompiledProject, scope: Scope) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for name, entry in compiled.deployments.items():
        pin, current = entry.get("pin"), entry.get("artifact")
        if not pin or not current or not scope.has_deployment(name) or current.startswith(pin):
            continue
        loaded = validation.project.deployments[name]
        found.append(error(
            "pin-mismatch", f"deployment `{name}` pins {entry['workflow']}@sha256:{pin}, but the workflow's "
            f"current artifact is sha256:{current[:12]}", loaded.file, loaded.doc.at(("workflow",)),
            f"pin the current artifact (`{entry['workflow']}@sha256:{current[:12]}`), or restore the "
            "workflow to the pinned version", deployment=name, workflow=entry["workflow"]))
    return found


def _catch_all(fresh: dict[str, Any], lock: Lock) -> list[Diagnostic]:
    """Byte-level: the document as read, unknown keys included, against what compile would write."""
    written = lock.document
    if fresh == written:
        return []
    paths = list(_differences(fresh, written, ()))
    only_docs = all(p and p[-1] == "description" for p in paths)
    shown = ", ".join(".".join(map(str, p)) for p in paths[:4]) + (" ..." if len(paths) > 4 else "")
    make = warning if only_docs else error
    return [make("stale-lock", f"{LOCK_NAME} differs from what `wfops compile` would write at: {shown}",
                 LOCK_NAME, (1, 1), COMPILE_HINT)]


def _differences(new: Any, old: Any, path: tuple[Any, ...]) -> Iterable[tuple[Any, ...]]:
    if isinstance(new, dict) and isinstance(old, dict):
        for key in sorted(set(new) | set(old), key=str):
            if new.get(key, _ABSENT) != old.get(key, _ABSENT):
                if key in new and key in old:
                    yield from _differences(new[key], old[key], (*path, key))
                else:
                    yield (*path, key)
    else:
        yield path


_ABSENT = object()
