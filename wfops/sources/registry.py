"""Build the concrete sources of a project, and resolve a deployment's logical refs to them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wfops.diagnostics import Diagnostic, error
from wfops.errors import CapabilityError, WfopsError
from wfops.loader.project import Project
from wfops.sources.base import CallResult, Capability, Source, StepContext
from wfops.sources.contract import call_checked
from wfops.sources.std import StdSource


class ImportBlocked(WfopsError):
    """A python source's module did not finish importing within the time limit."""


def build_sources(project: Project) -> tuple[dict[str, Source], list[Diagnostic]]:
    """Instantiate every declared source. Python modules are imported (the only user code
    validation runs); MCP sources are created but not started."""
    sources: dict[str, Source] = {"std": StdSource()}
    diagnostics: list[Diagnostic] = []
    if project.sources is None:
        return sources, diagnostics
    doc = project.sources.doc
    for source_id, spec in project.sources.model.sources.items():
        where = doc.at(("sources", source_id, "module"))
        # By kind, not class: a spec is a pydantic model or its plain twin (wfops.model.objects).
        if spec.kind == "python":
            try:
                sources[source_id] = load_python_source(project.root, source_id, spec.module)
            except ImportBlocked as exc:
                diagnostics.append(error("source-import-timeout", f"source {source_id!r}: {exc.message}",
                                         project.sources.file, where, source=source_id, hint=exc.hint))
            except WfopsError as exc:
                diagnostics.append(error("source-error", f"source {source_id!r}: {exc.message}",
                                         project.sources.file, where, source=source_id,
                                         hint=exc.hint or "fix the module so it imports cleanly"))
            except (Exception, SystemExit) as exc:  # user code: any failure is a finding, never a crash
                diagnostics.append(error("source-import-error",
                                         f"source {source_id!r}: importing {spec.module} failed: "
                                         f"{type(exc).__name__}: {exc}",
                                         project.sources.file, where, source=source_id,
                                         hint="run `python -c 'import "
                                         f"{spec.module}'` in the project root to see the full error"))
        elif spec.kind == "mcp":
            # deferred: wfops.sources.mcp imports logging (~8 ms), only for projects with MCP sources
            from wfops.sources.mcp import McpClientSource

            sources[source_id] = McpClientSource(source_id, spec, project.root)
    return sources, diagnostics


def load_python_source(root: Path, source_id: str, module: str) -> Source:
    # deferred: wfops.sources.python imports pydantic (~30 ms), only for python sources
    from wfops.sources.python import (
        ImportTimedOut,
        ModuleOutsideProject,
        NodeDefinitionError,
        PythonSource,
        import_project_module,
    )

    try:
        loaded = import_project_module(root, module)
    except ModuleOutsideProject as exc:
        raise WfopsError(exc.message, hint="keep python sources inside the project directory") from None
    except ImportTimedOut as exc:
        raise ImportBlocked(exc.message, hint=exc.hint) from None
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

    def split(self, ref: str) -> tuple[Source, str]:
        logical, _, name = ref.partition(".")
        concrete = self.bindings.get(logical, logical)
        source = self.sources.get(concrete)
        if source is None:
            raise CapabilityError(f"no source {concrete!r} for {ref!r}")
        return source, name

    def capability(self, ref: str) -> Capability:
        source, name = self.split(ref)
        cap = source.capabilities().get(name)
        if cap is None:
            raise CapabilityError(f"source {source.id!r} has no capability {name!r}")
        return cap

    async def call(self, ref: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        source, _ = self.split(ref)
        return await call_checked(source, self.capability(ref), payload, context)
