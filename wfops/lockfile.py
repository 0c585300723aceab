"""Read and write `wfops.lock`: deterministic JSON, identical bytes on any machine.

Format (version 1), all keys sorted:

    {
      "version": 1,
      "workflows":   {name: {"file", "hash", "requires": {uses-ref: contract hash}, "subworkflows": {name: hash},
                             "parts": {part: short hash}}},
      "deployments": {name: {"file", "workflow", "pin", "artifact", "bindings", "drift", "secrets",
                             "requires": {concrete ref: contract hash}, "schedule": hash (when scheduled)}},
      "sources":     {id: {"kind", "capabilities": {name: {"input_schema", "output_schema",
                                                          "outcomes", "description", "hash",
                                                          "pins" (only when it has some)}}}}
    }

`read_lock` parses and shape-checks the file once into a `Lock`: frozen entries
with typed fields (a field that is absent reads as its default, a field of the
wrong type makes the lock corrupt). A top-level key other than the four above, or a
key given twice in one object, makes it corrupt too: JSON readers keep the last of
two equal keys, so a hand-merged lock would otherwise lose a section unseen. The
document as read is kept too, so `Lock.to_json()` gives back the very bytes
`dump_lock` wrote, unknown keys inside entries included, and `wfops check` can tell
whether `compile` would change a byte.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wfops.atomic import write_atomic
from wfops.errors import WfopsError
from wfops.jsonvalues import json_problem
from wfops.sources.base import Capability

LOCK_NAME = "wfops.lock"
LOCK_VERSION = 1
_SECTIONS = ("workflows", "deployments", "sources")
_REPAIR = "restore it from git, or run `wfops compile` to write it again"

DriftPolicy = Literal["fail", "warn"]


class _Corrupt(Exception):
    """A shape problem, said in a few words (becomes "wfops.lock is corrupt: ...")."""


@dataclass(frozen=True)
class LockedContract:
    """A capability contract as the lock recorded it."""

    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)
    outcomes: tuple[str, ...] = ()
    description: str = ""
    hash: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)  # the capability's retry/timeout defaults
    pins: dict[str, str] = field(default_factory=dict)
    # The source's hints (an MCP tool's readOnlyHint, destructiveHint, ...): recorded so that
    # a run's warnings and the cache's rules know them without starting the server; not part
    # of the contract (nor its hash).
    annotations: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The lock's JSON form (for comparing with a fresh `contract_entry`)."""
        found = {"input_schema": self.input_schema, "output_schema": self.output_schema,
                 "outcomes": list(self.outcomes), "description": self.description, "hash": self.hash}
        if self.defaults:
            found["defaults"] = self.defaults
        if self.pins:
            found["pins"] = dict(self.pins)
        if self.annotations:
            found["annotations"] = dict(self.annotations)
        return found

    def as_capability(self, source_id: str, name: str) -> Capability:
        """The capability this contract describes (no outcomes recorded: `ok`)."""
        return Capability(source_id, name, self.input_schema, self.output_schema,
                          self.outcomes or ("ok",), self.description, dict(self.annotations),
                          defaults=self.defaults, pins=dict(self.pins))


def contract_entry(cap: Capability) -> dict[str, Any]:
    """A capability's contract in the lock's JSON form (`parse_contract` reads it back)."""
    found = {"input_schema": cap.input_schema, "output_schema": cap.output_schema,
             "outcomes": list(cap.outcomes), "description": cap.description or "", "hash": cap.contract_hash}
    if cap.defaults:
        found["defaults"] = dict(cap.defaults)
    if cap.pins:
        found["pins"] = dict(sorted(cap.pins.items()))
    if cap.annotations:
        found["annotations"] = dict(sorted(cap.annotations.items()))
    return found


def parse_contract(entry: Any) -> LockedContract:
    """A contract in the lock's JSON form, shape-checked (WfopsError when it is not one)."""
    if not isinstance(entry, dict):
        raise WfopsError("a contract is not a JSON object")
    try:
        return _contract("contract", entry)
    except _Corrupt as exc:
        raise WfopsError(f"a contract is malformed: {exc}") from None


@dataclass(frozen=True)
class LockedSource:
    kind: str | None = None
    capabilities: dict[str, LockedContract] = field(default_factory=dict)


@dataclass(frozen=True)
class LockedWorkflow:
    file: str | None = None
    hash: str | None = None                                          # artifact hash of the tree
    requires: dict[str, str | None] = field(default_factory=dict)    # uses ref -> contract hash
    subworkflows: dict[str, str] = field(default_factory=dict)       # child name -> artifact hash
    parts: dict[str, str] = field(default_factory=dict)              # part -> short hash


@dataclass(frozen=True)
class LockedDeployment:
    file: str | None = None
    workflow: str | None = None
    pin: str | None = None
    artifact: str | None = None
    bindings: dict[str, str] = field(default_factory=dict)
    drift: str | None = None                                         # absent: `fail`
    secrets: tuple[str, ...] = ()
    requires: dict[str, str | None] = field(default_factory=dict)    # concrete ref -> contract hash
    schedule: str | None = None                                      # hash of `schedule:`; absent: none

    @property
    def drift_policy(self) -> DriftPolicy:
        return "warn" if self.drift == "warn" else "fail"

    def value(self, key: str) -> Any:
        """A field in its JSON form (`secrets` a list), for comparing with a fresh entry."""
        found = getattr(self, key)
        return list(found) if isinstance(found, tuple) else found


@dataclass(frozen=True)
class Lock:
    """A parsed `wfops.lock`. Entries are read-only: build a new lock with `wfops compile`."""

    version: int
    workflows: dict[str, LockedWorkflow] = field(default_factory=dict)
    deployments: dict[str, LockedDeployment] = field(default_factory=dict)
    sources: dict[str, LockedSource] = field(default_factory=dict)
    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The JSON as read (do not modify): `to_json()` and the byte-level comparison use it."""

    @classmethod
    def from_dict(cls, data: Any) -> Lock:
        """Parse and shape-check lock JSON; a problem raises WfopsError ("wfops.lock is corrupt: ...")."""
        try:
            return _parse(data)
        except _Corrupt as exc:
            raise WfopsError(f"{LOCK_NAME} is corrupt: {exc}", hint=_REPAIR) from None

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.document)

    def to_json(self) -> str:
        return dump_lock(self.document)

    # -- lookups -------------------------------------------------------------------------

    def workflow(self, name: str) -> LockedWorkflow | None:
        return self.workflows.get(name)

    def deployment(self, name: str | None) -> LockedDeployment | None:
        return self.deployments.get(name) if name is not None else None

    def source(self, source_id: str) -> LockedSource | None:
        return self.sources.get(source_id)

    def source_capabilities(self, source_id: str) -> dict[str, LockedContract] | None:
        """The contracts recorded for a source, or None when the lock has no entry for it."""
        source = self.sources.get(source_id)
        return source.capabilities if source is not None else None

    def contract(self, source_id: str, name: str) -> LockedContract | None:
        source = self.sources.get(source_id)
        return source.capabilities.get(name) if source is not None else None

    def drift_policy(self, deployment: str | None) -> DriftPolicy:
        """The deployment's recorded `drift:` policy; `fail` when the lock does not hold it."""
        entry = self.deployment(deployment)
        return entry.drift_policy if entry is not None else "fail"


def lock_path(root: Path) -> Path:
    return Path(root) / LOCK_NAME


def read_lock(root: Path) -> Lock | None:
    """The parsed lock of the project at `root`, or None when there is none.

    A lock that is not valid JSON or has the wrong shape raises WfopsError: a
    corrupt lock must never be mistaken for "no lock".
    """
    path = lock_path(root)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except _Corrupt as exc:
        raise WfopsError(f"{LOCK_NAME} is corrupt: {exc}", hint=_REPAIR) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise WfopsError(f"{LOCK_NAME} is corrupt: {exc}", hint=_REPAIR) from exc
    except RecursionError:
        raise WfopsError(f"{LOCK_NAME} is corrupt: it is nested too deeply", hint=_REPAIR) from None
    problem = json_problem(data, "its content")
    if problem is not None:  # a lock wfops wrote never holds these; a hand-edited one may
        raise WfopsError(f"{LOCK_NAME} is corrupt: {problem}", hint=_REPAIR)
    return Lock.from_dict(data)


def dump_lock(lock: Lock | Mapping[str, Any]) -> str:
    """The exact bytes written: sorted keys, indent 2, trailing newline, no timestamps."""
    data = lock.document if isinstance(lock, Lock) else lock
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_lock(root: Path, lock: Lock | Mapping[str, Any]) -> Path:
    """Write atomically, so a crash never leaves half a lock behind."""
    path = lock_path(root)
    write_atomic(path, dump_lock(lock), what=LOCK_NAME)
    return path


# -- parsing ---------------------------------------------------------------------------------

def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's `object_pairs_hook`: an object, refused when it names a key twice."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Corrupt(f"the key `{key}` appears twice in one object")
            seen.add(key)
    return found


def _parse(data: Any) -> Lock:
    if not isinstance(data, dict):
        raise _Corrupt("the top level is not a JSON object")
    version = data.get("version")
    if version != LOCK_VERSION:
        raise _Corrupt(f"unsupported lock version {version!r} (this wfops reads version {LOCK_VERSION})")
    unknown = sorted(set(data) - {"version", *_SECTIONS})
    if unknown:
        raise _Corrupt(f"unknown top-level key `{unknown[0]}` (a lock has only `version`, "
                       + ", ".join(f"`{name}`" for name in _SECTIONS) + ")")
    tables = {}
    for section in _SECTIONS:
        table = data.get(section, {})
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise _Corrupt(f"`{section}` is not an object of objects")
        tables[section] = table
    for source_id, source in tables["sources"].items():
        caps = source.get("capabilities", {})
        if not isinstance(caps, dict) or not all(isinstance(v, dict) for v in caps.values()):
            raise _Corrupt(f"sources.{source_id}.capabilities is not an object of objects")
    return Lock(
        version=LOCK_VERSION,
        workflows={name: _workflow(f"workflows.{name}", entry) for name, entry in tables["workflows"].items()},
        deployments={name: _deployment(f"deployments.{name}", entry)
                     for name, entry in tables["deployments"].items()},
        sources={sid: _source(f"sources.{sid}", entry) for sid, entry in tables["sources"].items()},
        document=data,
    )


def _workflow(where: str, entry: dict[str, Any]) -> LockedWorkflow:
    return LockedWorkflow(
        file=_optional_str(where, entry, "file"),
        hash=_optional_str(where, entry, "hash"),
        requires=_str_map(where, entry, "requires", nullable=True),
        subworkflows=_str_map(where, entry, "subworkflows"),
        parts=_str_map(where, entry, "parts"),
    )


def _deployment(where: str, entry: dict[str, Any]) -> LockedDeployment:
    return LockedDeployment(
        file=_optional_str(where, entry, "file"),
        workflow=_optional_str(where, entry, "workflow"),
        pin=_optional_str(where, entry, "pin"),
        artifact=_optional_str(where, entry, "artifact"),
        bindings=_str_map(where, entry, "bindings"),
        drift=_optional_str(where, entry, "drift"),
        secrets=_str_list(where, entry, "secrets"),
        requires=_str_map(where, entry, "requires", nullable=True),
        schedule=_optional_str(where, entry, "schedule"),
    )


def _source(where: str, entry: dict[str, Any]) -> LockedSource:
    return LockedSource(
        kind=_optional_str(where, entry, "kind"),
        capabilities={name: _contract(f"{where}.capabilities.{name}", contract)
                      for name, contract in entry.get("capabilities", {}).items()},
    )


def _contract(where: str, entry: dict[str, Any]) -> LockedContract:
    schemas = {}
    for key in ("input_schema", "output_schema"):
        value = entry.get(key)
        if value is not None and not isinstance(value, dict):
            raise _Corrupt(f"{where}.{key} is not an object")
        schemas[key] = value or {}
    defaults = entry.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise _Corrupt(f"{where}.defaults is not an object")
    annotations = entry.get("annotations") or {}
    if not isinstance(annotations, dict):
        raise _Corrupt(f"{where}.annotations is not an object")
    return LockedContract(
        input_schema=schemas["input_schema"],
        output_schema=schemas["output_schema"],
        outcomes=_str_list(where, entry, "outcomes"),
        description=_optional_str(where, entry, "description") or "",
        hash=_optional_str(where, entry, "hash"),
        defaults=defaults,
        pins=_str_map(where, entry, "pins"),
        annotations=annotations,
    )


def _optional_str(where: str, entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise _Corrupt(f"{where}.{key} is not a string")
    return value


def _str_map(where: str, entry: dict[str, Any], key: str, *, nullable: bool = False) -> dict[str, Any]:
    value = entry.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(v, str) or (nullable and v is None) for v in value.values()):
        kind = "strings or nulls" if nullable else "strings"
        raise _Corrupt(f"{where}.{key} is not an object of {kind}")
    return value


def _str_list(where: str, entry: dict[str, Any], key: str) -> tuple[str, ...]:
    value = entry.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Corrupt(f"{where}.{key} is not a list of strings")
    return tuple(value)
