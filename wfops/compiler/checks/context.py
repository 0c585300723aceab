"""What every check receives: the loaded project, the capability catalog, and a
place to put findings that knows where each YAML node stands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from wfops.codes import KNOWN
from wfops.diagnostics import Diagnostic, Severity
from wfops.loader.project import Loaded, Project
from wfops.model.paths import item_named
from wfops.sources.base import Capability


# A NamedTuple and plain classes, not dataclasses: a dataclass costs ~1 ms to create at import
# (its methods are compiled from source), and `wfops validate` starts cold on every commit.
class Env(NamedTuple):
    """A binding environment: the deployment (if any) a workflow is checked under."""

    deployment: str | None = None
    bindings: Mapping[str, str] = {}  # noqa: RUF012 - never changed: an Env is a value
    secrets: frozenset[str] | None = None  # None: no deployment, so secrets are not checked

    def concrete(self, logical: str) -> str:
        return self.bindings.get(logical, logical)

    def bound(self, logical: str) -> bool:
        return logical in self.bindings


IDENTITY = Env()


class Catalog:
    """Concrete source id -> capability name -> contract, plus what is known about each source."""

    def __init__(self, caps: dict[str, dict[str, Capability]] | None = None, kinds: dict[str, str] | None = None,
                 *, sources_known: bool = True) -> None:
        self.caps = {} if caps is None else caps
        self.kinds = {} if kinds is None else kinds  # id -> std | python | mcp
        self.broken: set[str] = set()                # declared, but could not be loaded
        # mcp sources read from wfops.lock: a missing capability is contract-unknown
        self.lock_backed: set[str] = set()
        self.sources_known = sources_known            # False when sources.yaml itself is broken

    def declared(self, source_id: str) -> bool:
        return source_id in self.kinds or source_id in self.broken


class Lookup(NamedTuple):
    """How a `uses:` resolved under one environment."""

    capability: Capability | None = None
    contract_unknown: bool = False  # an MCP capability the lock does not hold: outcomes `ok`, types unknown


class Sink:
    """Collects findings; a check names a node by its document path.

    The subject of a finding follows from where it stands: a node of workflow W
    under `steps[i]` is about workflow W and that step's id; a node of a deployment
    file is about that deployment (and the workflow it runs). A check that knows
    more (the source a `uses:` names) passes it as a keyword.
    """

    def __init__(self) -> None:
        self.found: list[Diagnostic] = []

    def add(self, severity: Severity, code: str, message: str, loaded: Loaded, path: tuple[Any, ...],
            hint: str | None = None, *, key: bool = False, source: str | None = None) -> None:
        assert code in KNOWN, f"unknown diagnostic code {code!r}: add it to wfops/codes.py"
        line, column = loaded.doc.at(path, key=key)
        self.found.append(Diagnostic(severity, code, message, loaded.file, line, column, hint,
                                     source=source, **subject_at(loaded, path)))

    def error(self, code: str, message: str, loaded: Loaded, path: tuple[Any, ...], hint: str | None = None,
              *, key: bool = False, source: str | None = None) -> None:
        self.add("error", code, message, loaded, path, hint, key=key, source=source)

    def warning(self, code: str, message: str, loaded: Loaded, path: tuple[Any, ...], hint: str | None = None,
                *, key: bool = False, source: str | None = None) -> None:
        self.add("warning", code, message, loaded, path, hint, key=key, source=source)


def subject_at(loaded: Loaded, path: tuple[Any, ...]) -> dict[str, str | None]:
    """`workflow`, `deployment` and `step` of a node of a loaded workflow or deployment file."""
    model = loaded.model
    steps = getattr(model, "steps", None)
    if steps is not None:  # a workflow
        step = None
        if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int) and 0 <= path[1] < len(steps):
            step = steps[path[1]].id
        return {"workflow": model.name, "step": step}
    workflow = getattr(model, "workflow_name", None)
    if workflow is not None:  # a deployment
        return {"deployment": model.name, "workflow": workflow}
    return {}


class CheckContext:
    def __init__(self, project: Project, catalog: Catalog, sink: Sink | None = None) -> None:
        self.project = project
        self.catalog = catalog
        self.sink = Sink() if sink is None else sink

    @property
    def workflows(self) -> dict[str, Loaded]:
        return self.project.workflows

    def workflow_file_broken(self, name: str) -> bool:
        """A referenced workflow may live in a file that failed to load: do not call it unknown."""
        return any(f.rsplit("/", 1)[-1].rsplit(".", 1)[0] == name for f in self.project.broken_files
                   if f.startswith("workflows/"))

    def lookup(self, env: Env, uses: str) -> Lookup | None:
        """Resolve `logical.capability`; None when the source or capability is missing or broken."""
        logical, _, name = uses.partition(".")
        concrete = env.concrete(logical)
        if concrete in self.catalog.lock_backed:
            cap = self.catalog.caps.get(concrete, {}).get(name)
            return Lookup(cap, contract_unknown=cap is None)
        cap = self.catalog.caps.get(concrete, {}).get(name)
        return Lookup(cap) if cap is not None else None


# The checks read a step's fields with `getattr(step, name, None)` / `hasattr`: exact, since no
# step class has a class attribute named like a field of any step kind (tests/compiler/
# test_step_fields.py), and never through `__dict__`, which would give each of a project's
# steps its own dict (the instances of a plain class share one key table until asked for it).
# The checks see plain objects only: probing a pydantic model with getattr for a field its kind
# lacks would go through its slow `__getattr__`.


def catch_places(step: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """(document path below the step, entry) of each `catch` entry: `("catch",)` for the one-entry
    form, `("catch", i)` for a list."""
    catch = getattr(step, "catch", None)
    if catch is None:
        return []
    if isinstance(catch, list):
        return [(("catch", i), entry) for i, entry in enumerate(catch)]
    return [(("catch",), catch)]


def with_of(step: Any) -> Any:
    """A step's `with`, a foreach's item name (`as:`) read as `$item`, as the engine reads it."""
    return item_named(step.with_, getattr(step, "as_", None) or "item")
