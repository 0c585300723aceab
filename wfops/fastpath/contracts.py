"""The python sources' contracts as the last `wfops validate` imported them (`.wfops/cache/contracts.json`).

`wfops validate` runs on every commit. When the project cache misses (a workflow edited), the
whole project is checked again, and importing the python sources only to read their contracts
(pydantic models built, JSON Schemas generated) costs about as much as all the rest. So after
validate imported every python source successfully, it records the declarations (python
source id -> module, from sources.yaml), each source's contracts in the lock's form
(`lockfile.contract_entry`), and the snapshot of what the imports depended on
(`wfops.fastpath.snapshot`, without wfops files: a workflow edit must keep the record).

A later validate serves the python sources from the record, without importing them, when the
declarations are the same and the snapshot holds; anything else (a difference, an unreadable
record) imports them as before. A failed import is never recorded: its findings come from the
import itself. Validation of the saved project (the CLI's validate, the API's and MCP's, each
watch pass) and reading the catalog (`caps list`, `caps show`, their MCP tools) use the
record; compile, check, run, test and `caps call` always import the modules (they call them,
or must see drift).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path

from wfops.atomic import write_atomic
from wfops.errors import WfopsError
from wfops.fastpath.snapshot import build, unchanged
from wfops.lockfile import contract_entry, parse_contract
from wfops.sources.base import Capability
from wfops.sources.modules import note_consulted
from wfops.statedir import make_state_dir, state_link

RECORD_FILE = Path(".wfops") / "cache" / "contracts.json"


class ContractFile:
    """The record of the project at `root` (a `ContractRecord` for `build_sources`)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def recorded(self, modules: Mapping[str, str]) -> dict[str, dict[str, Capability]] | None:
        if state_link(self.root / RECORD_FILE) is not None:
            return None  # never read state through a symlink (it may point anywhere)
        try:
            entry = json.loads((self.root / RECORD_FILE).read_text(encoding="utf-8"))
            if not isinstance(entry, dict) or entry.get("modules") != dict(modules):
                return None
            snapshot = entry["snapshot"]
            if not unchanged(self.root, snapshot):
                return None
            contracts = {sid: {name: parse_contract(contract).as_capability(sid, name)
                               for name, contract in entry["contracts"][sid].items()} for sid in modules}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, WfopsError):
            return None
        # Nothing was imported, yet what is cached from this validation depends on what the
        # recorded imports loaded and looked at.
        note_consulted(self.root, snapshot["python"], snapshot["libraries"])
        return contracts

    def record(self, modules: Mapping[str, str],
               contracts: Mapping[str, Mapping[str, Capability]] | None) -> None:
        """Best effort, like the validate cache: a read-only checkout simply imports every time."""
        target = self.root / RECORD_FILE
        if contracts is None:
            with contextlib.suppress(OSError):
                target.unlink()
            return
        entry = {
            "snapshot": build(self.root, {}, names=None),
            "modules": dict(modules),
            "contracts": {sid: {name: contract_entry(cap) for name, cap in caps.items()}
                          for sid, caps in contracts.items()},
        }
        try:
            make_state_dir(target.parent)  # refuses a symlink on the way: the record is then skipped
            write_atomic(target, json.dumps(entry), durable=False)
        except (OSError, ValueError, WfopsError):
            pass
