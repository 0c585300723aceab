"""The python sources' contracts as the last `wfops validate` imported them (`.wfops/cache/contracts.json`).

`wfops validate` runs on every commit. When the project cache misses (a workflow edited), the
whole project is checked again, and importing the python sources only to read their contracts
(pydantic models built, JSON Schemas generated) costs about as much as all the rest. So after
validate imported every python source successfully, it records:

- this wfops (`cachekey.tool_fingerprint`: its code, version and Python);
- the declarations: python source id -> module, from sources.yaml;
- every place under the project whose content decided what the imports gave, with its hash:
  the same set the validate cache records (`cache.python_inputs`: files imported, files that
  failed to import, places an import looked that did not exist yet);
- the installed packages: the path Python imports from (outside the project), with the mtime
  of each site-packages / dist-packages directory on it (installing, upgrading or removing a
  package changes it), and the mtime and size of every module file loaded from outside the
  project and the standard library (an editable install's code, a PYTHONPATH module);
- each source's contracts, in the lock's form (`lockfile.contract_entry`).

A later validate serves the python sources from the record, without importing them, when all
of that still matches; anything else (a difference, an unreadable record) imports them as
before. A failed import is never recorded: its findings come from the import itself. What
the imports read other than modules (environment variables, data files) is not covered,
as for the validate cache. Only validation of the saved project (`project_diagnostics`: the
CLI's validate, the API's and MCP's, each watch pass) uses the record; compile, check, run
and test always import the modules (they need them, or must see drift).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import wfops
from wfops.atomic import write_atomic
from wfops.compiler.cache import python_inputs
from wfops.compiler.cachekey import places_unchanged, tool_fingerprint
from wfops.errors import WfopsError
from wfops.lockfile import contract_entry, parse_contract
from wfops.sources.base import Capability
from wfops.sources.modules import note_consulted
from wfops.statedir import make_state_dir, state_link

RECORD_FILE = Path(".wfops") / "cache" / "contracts.json"
FORMAT = 1
_SITE_DIRS = ("site-packages", "dist-packages")


class ContractFile:
    """The record of the project at `root` (a `ContractRecord` for `build_sources`)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.path: list[list[Any]] | None = None

    def recorded(self, modules: Mapping[str, str]) -> dict[str, dict[str, Capability]] | None:
        # As the imports find it: importing a project's module may take another project's off it.
        self.path = import_path(self.root)
        if state_link(self.root / RECORD_FILE) is not None:
            return None  # never read state through a symlink (it may point anywhere)
        try:
            entry = json.loads((self.root / RECORD_FILE).read_text(encoding="utf-8"))
            if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("modules") != dict(modules):
                return None
            if entry.get("tool") != tool_fingerprint() or entry.get("path") != self.path:
                return None
            if any(_stat(file) != stat for file, stat in entry["libraries"].items()):
                return None
            places: dict[str, str | None] = entry["python"]
            if not places_unchanged(self.root, places):
                return None
            contracts = {sid: {name: parse_contract(contract).as_capability(sid, name)
                               for name, contract in entry["contracts"][sid].items()} for sid in modules}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, WfopsError):
            return None
        # Nothing was imported, yet what is cached from this validation depends on these places.
        note_consulted(self.root, places)
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
            "format": FORMAT,
            "tool": tool_fingerprint(),
            "modules": dict(modules),
            "path": self.path if self.path is not None else import_path(self.root),
            "libraries": loaded_libraries(self.root),
            "python": python_inputs(self.root),
            "contracts": {sid: {name: contract_entry(cap) for name, cap in caps.items()}
                          for sid, caps in contracts.items()},
        }
        try:
            make_state_dir(target.parent)  # refuses a symlink on the way: the record is then skipped
            write_atomic(target, json.dumps(entry), durable=False)
        except (OSError, ValueError, WfopsError):
            pass


def import_path(root: Path) -> list[list[Any]]:
    """`sys.path` without the project's own directories (the project is covered place by place),
    each entry with the mtime of a site-packages / dist-packages directory (None for others)."""
    found: list[list[Any]] = []
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        if not entry or os.path.isabs(entry):  # others are path hooks (an editable install's finder)
            with contextlib.suppress(OSError):
                if Path(entry or os.curdir).resolve().is_relative_to(root):
                    continue
        stamp = None
        if os.path.basename(entry.rstrip("/\\")) in _SITE_DIRS:
            with contextlib.suppress(OSError):
                stamp = os.stat(entry).st_mtime_ns
        found.append([entry, stamp])
    return found


def loaded_libraries(root: Path) -> dict[str, list[int] | None]:
    """Every module file loaded now from outside the project, the standard library and wfops
    (which the tool fingerprint covers), with its mtime and size."""
    stdlib = os.path.dirname(os.__file__) + os.sep
    skipped = (stdlib, os.path.dirname(wfops.__file__) + os.sep, str(root) + os.sep)
    found: dict[str, list[int] | None] = {}
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if not isinstance(origin, str):
            continue
        # A site-packages folder counts wherever it is, a virtualenv inside the project included.
        if any(site in origin for site in _SITE_DIRS) or not origin.startswith(skipped):
            found[origin] = _stat(origin)
    return found


def _stat(file: str) -> list[int] | None:
    try:
        stat = os.stat(file)
    except OSError:
        return None
    return [stat.st_mtime_ns, stat.st_size]
