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


class Fields:
    """A step's fields by any name (`get`, `in`), as its instance dict holds them, even a name its
    class also has (a method, a ClassVar), which is looked up in the instance dict.

    The checks read the fields they know with `getattr(step, name, None)` / `hasattr` (a step
    field is read ~800 times per workflow file: a view object and a call per read cost ~0.1 ms
    per file): no step class has a class attribute named like a field of any step kind (a test
    says so), so getattr finds instance fields only. Either way, never through `__dict__`: the
    instances of a plain class share one key table until something asks for `__dict__`, which
    then makes each its own dict (6 MB at 100,000 steps, kept as long as the step)."""

    __slots__ = ("_step",)

    def __init__(self, step: Any) -> None:
        self._step = step

    def get(self, name: str, default: Any = None) -> Any:
        step = self._step
        names = _CLASS_NAMES.get(step.__class__) or _class_names(step.__class__)
        if name in names:
            return step.__dict__.get(name, default)
        return getattr(step, name, default)

    def __contains__(self, name: str) -> bool:
        step = self._step
        if name in (_CLASS_NAMES.get(step.__class__) or _class_names(step.__class__)):
            return name in step.__dict__
        return hasattr(step, name)


_CLASS_NAMES: dict[type, frozenset[str]] = {}


def _class_names(cls: type) -> frozenset[str]:
    names = _CLASS_NAMES.get(cls)
    if names is None:
        names = _CLASS_NAMES[cls] = frozenset(dir(cls))
    return names


#: A step's fields by any name (see `Fields`). The checks see plain objects only: probing a
#: pydantic model with getattr for a field its kind lacks would go through its slow `__getattr__`.
fields = Fields


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
