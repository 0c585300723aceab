"""Build the concrete sources of a project, and resolve a deployment's logical refs to them."""

from __future__ import annotations

from collections.abc import Coroutine, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from wfops.diagnostics import Diagnostic, error, warning
from wfops.errors import CapabilityError, WfopsError
from wfops.loader.project import Project
from wfops.model.objects import CommandSource, McpSource, OpenapiSource, SourcesFile
from wfops.model.plain import load as plain_load
from wfops.redact import declare_names, mask
from wfops.sources.base import CallResult, Capability, Source, StepContext
from wfops.sources.contract import CheckedCall, checked_caller
from wfops.sources.modules import ImportTimedOut, ModuleOutsideProject
from wfops.sources.recorded import ContractRecord, RecordedSource
from wfops.sources.std import StdSource

#: Source ids not to build here: declarations an MCP client wrote that await a person's yes
#: (wfops.api.approvals). A context variable, so it follows the call into its event loop.
_HELD: ContextVar[frozenset[str]] = ContextVar("wfops_held_sources", default=frozenset())


@contextmanager
def holding(source_ids: frozenset[str]) -> Iterator[None]:
    """While inside, `build_sources` neither imports nor creates these sources."""
    token = _HELD.set(source_ids)
    try:
        yield
    finally:
        _HELD.reset(token)


def build_sources(project: Project, *, cached: ContractRecord | None = None
                  ) -> tuple[dict[str, Source], list[Diagnostic]]:
    """Instantiate every declared source. Python modules are imported (the only user code
    validation runs); MCP sources are created but not started.

    `cached` (`wfops validate` only): when it still holds the contracts of exactly the declared
    python sources, they are served from it and no module is imported; otherwise the modules
    are imported and what they gave is recorded there."""
    # What sources print (a server's stderr, an import error) is quoted in messages of
    # commands that run no deployment (`compile`, `check --live`): mask every secret any
    # deployment lists, as the environment holds it now.
    declare_names(name for loaded in project.deployments.values() for name in loaded.model.secrets)
    sources: dict[str, Source] = {"std": StdSource()}
    diagnostics: list[Diagnostic] = []
    if project.sources is None:
        return sources, diagnostics
    # By kind, not class: a spec is a pydantic model or its plain twin (wfops.model.objects).
    held = _HELD.get()
    specs = {sid: spec for sid, spec in project.sources.model.sources.items() if sid not in held}
    for source_id in sorted(held & set(project.sources.model.sources)):
        diagnostics.append(warning(
            "source-unapproved", f"source {source_id!r} was written by an MCP client and awaits a person's "
            "approval: it is not imported or started until then", project.sources.file,
            project.sources.doc.at(("sources", source_id)), source=source_id,
            hint=f"a person runs `wfops sources approve {source_id}` in the project"))
    modules = {source_id: spec.module for source_id, spec in specs.items() if spec.kind == "python"}
    recorded = cached.recorded(modules) if cached is not None and modules else None
    failed = False
    for source_id, spec in specs.items():
        if spec.kind == "python":
            if recorded is not None:
                sources[source_id] = RecordedSource(source_id, recorded[source_id])
                continue
            loaded = _python_source(project, source_id, modules[source_id])
            if isinstance(loaded, Diagnostic):
                diagnostics.append(loaded)
                failed = True
            else:
                sources[source_id] = loaded
        elif spec.kind == "mcp":
            # deferred: wfops.sources.mcp imports logging (~8 ms), only for projects with MCP sources
            from wfops.sources.mcp import McpClientSource

            sources[source_id] = McpClientSource(source_id, spec, project.root)
        elif spec.kind in ("openapi", "command"):
            made = _declared_source(project, source_id, spec)
            if isinstance(made, Diagnostic):
                diagnostics.append(made)
            else:
                sources[source_id] = made
                diagnostics += _shell_warnings(project, source_id, spec)
    if cached is not None and modules and recorded is None:
        cached.record(modules, None if failed else {sid: sources[sid].capabilities() for sid in modules})
    return sources, diagnostics


def _python_source(project: Project, source_id: str, module: str) -> Source | Diagnostic:
    """The python source, imported, or the finding that says why it could not be. A finding's
    message quotes the module's own exception, so it is masked here, where it is made: findings
    are cached and replayed by commands that load no deployment."""
    assert project.sources is not None
    where = project.sources.doc.at(("sources", source_id, "module"))
    try:
        return load_python_source(project.root, source_id, module)
    except ImportTimedOut as exc:
        return error("source-import-timeout", mask(f"source {source_id!r}: {exc.message}"),
                     project.sources.file, where, source=source_id, hint=exc.hint)
    except WfopsError as exc:
        return error("source-error", mask(f"source {source_id!r}: {exc.message}"),
                     project.sources.file, where, source=source_id,
                     hint=exc.hint or "fix the module so it imports cleanly")
    except (Exception, SystemExit) as exc:  # user code: any failure is a finding, never a crash
        return error("source-import-error",
                     mask(f"source {source_id!r}: importing {module} failed: {type(exc).__name__}: {exc}"),
                     project.sources.file, where, source=source_id,
                     hint=f"run `python -c 'import {module}'` in the project root to see the full error")


def load_declared_source(root: Path, source_id: str, spec: Any) -> Source:
    """An OpenAPI or command source from its declaration (the document read and checked: a
    `WfopsError` when it cannot be)."""
    if spec.kind == "openapi":
        # deferred: httpx2 and the OpenAPI reader, only for projects with an OpenAPI source
        from wfops.sources.openapi import HttpApiSource

        return HttpApiSource(source_id, spec, root)
    # deferred: asyncio's subprocess machinery, only for projects with a command source
    from wfops.sources.command import ProgramSource

    return ProgramSource(source_id, spec, root)


def _declared_source(project: Project, source_id: str, spec: Any) -> Source | Diagnostic:
    assert project.sources is not None
    try:
        return load_declared_source(project.root, source_id, spec)
    except WfopsError as exc:
        return error("source-spec-error", mask(f"source {source_id!r}: {exc.message}"), project.sources.file,
                     project.sources.doc.at(("sources", source_id, "spec")), source=source_id, hint=exc.hint)


def _shell_warnings(project: Project, source_id: str, spec: Any) -> list[Diagnostic]:
    assert project.sources is not None
    return [warning("command-shell", f"capability {source_id}.{name} runs its line through a shell "
                    "(`shell: true`)", project.sources.file,
                    project.sources.doc.at(("sources", source_id, "capabilities", name, "shell")), source=source_id,
                    hint='write `argv` as a list without `shell:`: each "{field}" is then one argument')
            for name, cap in sorted(spec.capabilities.items()) if cap.shell] if spec.kind == "command" else []


def load_python_source(root: Path, source_id: str, module: str) -> Source:
    # deferred: wfops.sources.python imports pydantic (~30 ms), only for python sources
    from wfops.sources.python import NodeDefinitionError, PythonSource, import_project_module

    try:
        loaded = import_project_module(root, module)
    except ModuleOutsideProject as exc:
        raise WfopsError(exc.message, hint="keep python sources inside the project directory") from None
    except ModuleNotFoundError as exc:
        missing = _missing_package(root, module, exc)
        if missing is not None:
            top = missing.split(".", 1)[0]
            raise WfopsError(f"{module} imports `{missing}`, which is not installed (nor a module of the project)",
                             hint=f"install the package that provides `{top}` in the Python environment that "
                             f"runs wfops (e.g. `python -m pip install {top}`); under pre-commit, list it in "
                             "the hook's `additional_dependencies`") from None
        raise WfopsError(str(exc), hint="check `module:` (dotted, relative to the project root)") from None
    try:
        return PythonSource(source_id, loaded, root.resolve())
    except NodeDefinitionError as exc:
        raise WfopsError(exc.message, hint=exc.hint or "a node is `def f(payload: InModel) -> OutModel`") from None


def load_mcp_source(root: Path, source_id: str, declaration: Any) -> Source | None:
    """An MCP source from its declaration as sources.yaml gives it (plain data), not started;
    None when it is not a declaration this wfops reads."""
    # deferred: wfops.sources.mcp imports logging and mcp, only for runs that call a server
    from wfops.sources.mcp import McpClientSource

    declared = plain_load("sources", {"sources": {source_id: declaration}})
    spec = declared.sources[source_id] if isinstance(declared, SourcesFile) else None
    return McpClientSource(source_id, spec, root) if isinstance(spec, McpSource) else None


def load_declared_data(root: Path, source_id: str, declaration: Any) -> Source | None:
    """An OpenAPI or command source from its declaration as sources.yaml gives it (plain data),
    its document or program files read now; None when it is not a declaration this wfops reads
    or its files no longer load (the full gate then says why)."""
    declared = plain_load("sources", {"sources": {source_id: declaration}})
    spec = declared.sources[source_id] if isinstance(declared, SourcesFile) else None
    if not isinstance(spec, OpenapiSource | CommandSource):
        return None
    try:
        return load_declared_source(root, source_id, spec)
    except WfopsError:
        return None


def _missing_package(root: Path, module: str, exc: ModuleNotFoundError) -> str | None:
    """The module a python source's own code failed to import, when that is neither the source
    module itself nor a project module (those are a wrong `module:` or a missing project file)."""
    name = exc.name
    if not name:
        return None
    parts = module.split(".")
    if name in {".".join(parts[:depth]) for depth in range(1, len(parts) + 1)}:
        return None
    top = root.resolve() / name.split(".", 1)[0]
    if top.with_suffix(".py").exists() or top.is_dir():
        return None
    return name


class BoundResolver:
    """Resolves `logical.capability` through a deployment's bindings (identity by default)."""

    def __init__(self, sources: Mapping[str, Source], bindings: Mapping[str, str] | None = None) -> None:
        self.sources = sources
        self.bindings = dict(bindings or {})
        self._split: dict[str, tuple[Source, str]] = {}  # ref -> where it goes: asked on every call

    def split(self, ref: str) -> tuple[Source, str]:
        found = self._split.get(ref)
        if found is not None:
            return found
        logical, _, name = ref.partition(".")
        concrete = self.bindings.get(logical, logical)
        source = self.sources.get(concrete)
        if source is None:
            raise CapabilityError(f"no source {concrete!r} for {ref!r}")
        found = self._split[ref] = (source, name)
        return found

    def capability(self, ref: str) -> Capability:
        source, name = self.split(ref)
        return _capability_of(source, name)

    def calls_held(self, ref: str) -> AbstractContextManager[None]:
        """What the source behind `ref` sets up around each call, held for many calls (a
        fan-out's items) where the source has such a thing (`calls_held()`); else nothing."""
        try:
            source, _ = self.split(ref)
        except CapabilityError:
            return nullcontext()  # the calls fail on their own, each as a step failure
        held = getattr(source, "calls_held", None)
        return held() if held is not None else nullcontext()

    def call(self, ref: str, payload: dict[str, Any], context: StepContext) -> Coroutine[Any, Any, CallResult]:
        """The checked call's coroutine itself (not one more awaiting it); an unknown ref raises
        here, when the call is made."""
        return self.caller(ref)(payload, context)

    def caller(self, ref: str) -> CheckedCall:
        """`call(ref, ...)` as a function of the payload and context, with the source and its
        capability found now, once (a run's many calls of one capability, a fan-out's items);
        an unknown ref raises here."""
        source, name = self.split(ref)
        return checked_caller(source, _capability_of(source, name))


def _capability_of(source: Source, name: str) -> Capability:
    cap = source.capabilities().get(name)
    if cap is None:
        raise CapabilityError(f"source {source.id!r} has no capability {name!r}")
    return cap
