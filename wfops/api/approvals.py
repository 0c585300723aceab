"""Sources an MCP client wrote wait for a person's yes before anything starts or imports them.

A source declaration (an MCP server's `command`, a python `module`, whatever its kind) is
code that wfops will run as the server's user. A person who edits sources.yaml has decided
that; an agent writing it through `wfops mcp` has not been trusted to. So every declaration
a client's write adds or changes is recorded, keyed on the source's id and its whole
declaration (a hash of their canonical JSON), in `.wfops/client-sources.json`, a file
no writing tool can reach (the path guard of authoring writes only workflows, deployments and
sources.yaml). A declaration is *held* while it is recorded as client-written and not
approved; editing it by hand makes it a different declaration, the person's own.

A `Project` acting for a client (`Project(..., client=ClientTrust())`) records its writes and
refuses, with `SourcesAwaitApproval`, every operation that may start or import a source while
any declaration is held; validation skips importing held python sources
(`wfops.sources.registry.holding`). A `Project` a person drives (the CLI, Python code)
records nothing and is refused nothing: running it is the person's yes.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wfops.atomic import write_atomic
from wfops.canonical import canonical_json, sha256_of
from wfops.errors import RefusedError, UsageError
from wfops.loader.project import SOURCES_FILE, STATE_DIR
from wfops.loader.yaml import YamlLoadError, load_yaml_text
from wfops.sources.registry import holding
from wfops.statedir import make_state_dir

RECORD_FILE = "client-sources.json"
RECORD_LOCK = "client-sources.lock"
APPROVE_COMMAND = "wfops sources approve"


@dataclass(frozen=True)
class ClientTrust:
    """How a Project acting for an MCP client treats the sources that client writes.

    `allow_client_sources`: the person who started the server chose to let the client's
    sources run without asking (`wfops mcp --allow-client-sources`); writes are still recorded.
    """

    allow_client_sources: bool = False
    tool: str = "mcp"


@dataclass(frozen=True)
class Declaration:
    """One source as sources.yaml declares it; `key` names exactly this declaration."""

    source: str
    declaration: dict[str, Any]

    @property
    def key(self) -> str:
        return sha256_of({"id": self.source, "declaration": self.declaration})

    @property
    def kind(self) -> str:
        return str(self.declaration.get("kind", "?"))

    def shown(self) -> str:
        """The declaration as one line of JSON, as a person is asked to approve it."""
        return canonical_json(self.declaration)


class SourcesAwaitApproval(RefusedError):
    """An operation for an MCP client would start or import a source the client wrote."""

    def __init__(self, held: list[Declaration], doing: str) -> None:
        names = ", ".join(f"`{d.source}`" for d in held)
        commands = "; ".join(f"`{APPROVE_COMMAND} {d.source}`" for d in held)
        super().__init__(
            f"{doing} would start or import source{'s' if len(held) > 1 else ''} {names}, which an MCP "
            f"client wrote in {SOURCES_FILE} and no person has approved",
            hint=f"a person approves it by running {commands} in the project (it shows the declaration), "
                 "or starts the server with `wfops mcp --allow-client-sources`")
        self.held = held
        self.doing = doing


# -- reading declarations --------------------------------------------------------------------

def _mapping_at(text: str | None, name: str, key: str) -> dict[Any, Any] | None:
    """`key` of the YAML mapping `text` when it is a mapping too; None for no text, a text that
    does not parse, or anything else there."""
    if text is None:
        return None
    try:
        data = load_yaml_text(text, name).data
    except YamlLoadError:
        return None
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, dict) else None


def declarations_in(text: str | None) -> dict[str, Declaration]:
    """The sources a sources.yaml text declares; none when it does not parse as a mapping."""
    sources = _mapping_at(text, SOURCES_FILE, "sources") or {}
    return {str(sid): Declaration(str(sid), spec if isinstance(spec, dict) else {"value": spec})
            for sid, spec in sources.items()}


def sources_text(root: Path) -> str | None:
    """sources.yaml as it is on disk now (None: missing or unreadable)."""
    try:
        return (root / SOURCES_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def current(root: Path) -> dict[str, Declaration]:
    return declarations_in(sources_text(root))


# -- the record ------------------------------------------------------------------------------

def _record_path(root: Path) -> Path:
    return root / STATE_DIR / RECORD_FILE


def _load(root: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_record_path(root).read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as exc:
        # A record that cannot be read holds everything a client wrote: refusing is the safe side.
        raise UsageError(f"{STATE_DIR}/{RECORD_FILE} cannot be read ({exc})",
                         hint="fix or delete it; deleting it forgets which sources an MCP client wrote") from None
    if not isinstance(data, dict):
        data = {}
    return {"written": dict(data.get("written") or {}), "approved": dict(data.get("approved") or {})}


def _save(root: Path, record: dict[str, dict[str, Any]]) -> None:
    write_atomic(_record_path(root), json.dumps(record, indent=2, sort_keys=True) + "\n",
                 what=f"{STATE_DIR}/{RECORD_FILE}")


@contextmanager
def _changing(root: Path) -> Iterator[dict[str, dict[str, Any]]]:
    """The record, to change and save, while no other process changes it (the server records
    a client's write while a person may be approving: neither may lose the other's entry)."""
    make_state_dir(root / STATE_DIR)
    with open(root / STATE_DIR / RECORD_LOCK, "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            record = _load(root)
            yield record
            _save(root, record)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_written(root: Path, before: str | None, after: str, tool: str) -> list[Declaration]:
    """Record the declarations `after` (a sources.yaml text a client is about to write) adds or
    changes compared with `before`; called before the file is written, so a crash between the
    two leaves the declaration held rather than trusted. Returns them."""
    new = changed(before, after)
    if not new:
        return []
    with _changing(root) as record:
        for d in new:
            record["written"].setdefault(d.key, {"source": d.source, "declaration": d.declaration,
                                                 "tool": tool, "at": _now()})
    return new


def held(root: Path) -> list[Declaration]:
    """The declarations in sources.yaml now that a client wrote and no person approved."""
    found = current(root)
    if not found:
        return []
    record = _load(root)
    return [d for _, d in sorted(found.items())
            if d.key in record["written"] and d.key not in record["approved"]]


def approve(root: Path, source: str, by: str, expected: str | None = None) -> Declaration:
    """Record a person's yes for `source` as sources.yaml declares it now (the declaration
    approved is the one shown: a later change needs a new yes). `expected`: the key of the
    declaration the person was shown; refused when the file has changed since."""
    found = current(root)
    if source not in found:
        known = ", ".join(sorted(found)) or "none"
        raise UsageError(f"{SOURCES_FILE} declares no source {source!r}", hint=f"sources: {known}")
    declaration = found[source]
    if expected is not None and declaration.key != expected:
        raise UsageError(f"source {source!r} changed in {SOURCES_FILE} while its approval was asked",
                         hint="ask again: the declaration approved must be the one shown")
    with _changing(root) as record:
        record["approved"][declaration.key] = {"source": source, "by": by, "at": _now()}
    return declaration


def changed(before: str | None, after: str) -> list[Declaration]:
    """The declarations `after` adds or changes compared with `before` (two sources.yaml texts)."""
    old = declarations_in(before)
    return [d for sid, d in declarations_in(after).items() if sid not in old or old[sid].key != d.key]


class ClientWrites:
    """What a client's write of sources.yaml does around its text (`authoring.write_file`
    calls it): validation with the text in place imports none of the declarations it adds or
    changes, and those are recorded just before the text reaches the disk."""

    def __init__(self, root: Path, trust: ClientTrust) -> None:
        self.root = root
        self.trust = trust

    @contextmanager
    def validating(self, before: str | None, after: str) -> Iterator[None]:
        ids = {d.source for d in held_for(self.root, self.trust)}
        if not self.trust.allow_client_sources:
            ids |= {d.source for d in changed(before, after)}
        with holding(frozenset(ids)):
            yield

    def record(self, before: str | None, after: str) -> None:
        record_written(self.root, before, after, self.trust.tool)

    def check_executor(self, rel: str, before: str | None, after: str) -> None:
        """A client may not point a deployment at a cluster: the executor decides which process
        runs the project's python code and whose answers the driver unpickles, so a Dask
        address the client chose is code it chose. A person sets it (or started the server
        with `--allow-client-sources`); a local executor, or the one already there, is fine."""
        if self.trust.allow_client_sources:
            return
        new, old = executor_in(after), executor_in(before)
        if new is not None and new.get("kind", "local") != "local" and new != old:
            raise RefusedError(f"{rel}: an MCP client may not set where a deployment's code runs "
                               f"(executor {canonical_json(new)})",
                               hint="a person edits the deployment's `executor:` by hand, or starts the server "
                                    "with `wfops mcp --allow-client-sources`")


def executor_in(text: str | None) -> dict[str, Any] | None:
    """The `executor:` a deployment text declares (None: none, or a text that does not parse)."""
    return _mapping_at(text, "deployment", "executor")


def held_for(root: Path, trust: ClientTrust | None) -> list[Declaration]:
    """The held declarations this caller must neither start nor import (none for a person, or
    for a server started with `--allow-client-sources`)."""
    if trust is None or trust.allow_client_sources:
        return []
    return held(root)
