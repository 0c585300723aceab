"""Run every check over a loaded project, in two passes.

Static checks see each file once. Binding-dependent checks (capability lookups,
outcomes, data-flow types of calls, secrets) run once per environment that
reaches the workflow; a finding produced under only some of them says which.
"""

from __future__ import annotations

from wfops.compiler.checks.branches import branch_views
from wfops.compiler.checks.caching import check_cache
from wfops.compiler.checks.conditions import check_conditions
from wfops.compiler.checks.context import CheckContext, Env, Sink
from wfops.compiler.checks.cycles import check_cycles
from wfops.compiler.checks.dataflow import Flow
from wfops.compiler.checks.envs import environments
from wfops.compiler.checks.executors import check_executor
from wfops.compiler.checks.interrupt_places import check_interrupt_places
from wfops.compiler.checks.paths import check_paths
from wfops.compiler.checks.refs import check_deployment, check_workflow_refs, resolve_uses
from wfops.compiler.checks.routing import (
    check_outcomes,
    check_reachable,
    check_targets,
    child_outcomes,
)
from wfops.compiler.checks.schedules import check_schedule
from wfops.compiler.checks.schemas import check_schemas
from wfops.compiler.checks.secrets import check_secrets
from wfops.compiler.checks.state import check_reducers
from wfops.compiler.checks.structure import check_structure
from wfops.compiler.checks.writes import check_writes
from wfops.diagnostics import Diagnostic
from wfops.loader.project import Loaded


def run_checks(ctx: CheckContext) -> list[Diagnostic]:
    for loaded in ctx.workflows.values():
        static_checks(ctx, loaded)
    check_cycles(ctx)
    for loaded in ctx.project.deployments.values():
        check_deployment(ctx, loaded)
        check_executor(ctx, loaded)
        check_schedule(ctx, loaded)
    found = list(ctx.sink.found)
    reached = environments(ctx.project)
    for name, loaded in ctx.workflows.items():
        found += _under_environments(ctx, loaded, reached[name])
    return found


def static_checks(ctx: CheckContext, loaded: Loaded) -> None:
    check_workflow_refs(ctx, loaded)
    file_checks(loaded, ctx.sink, ctx.workflows)


def file_checks(loaded: Loaded, sink: Sink, workflows: dict[str, Loaded]) -> None:
    """Everything that needs no other file than `workflows` (the children it calls, when known)."""
    check_schemas(loaded, sink)
    check_reducers(loaded, sink)
    step_checks(loaded, sink, workflows)
    check_interrupt_places(loaded, sink, workflows)  # walks branches itself: once per file
    check_writes(loaded, sink)  # likewise
    Flow(loaded, sink).output()


def step_checks(loaded: Loaded, sink: Sink, workflows: dict[str, Loaded]) -> None:
    """The checks of a list of steps: a workflow's, then each parallel branch's on its own."""
    check_structure(loaded, sink)
    check_targets(loaded, sink)
    check_reachable(loaded, sink)
    check_paths(loaded, sink)
    check_conditions(loaded, sink)
    flow = Flow(loaded, sink)
    for index, step in enumerate(loaded.model.steps):
        flow.static_step(index, step, workflows)
        if getattr(step, "foreach", None) is not None:
            check_outcomes(loaded, index, {"ok"}, "a foreach step", sink)
        elif getattr(step, "parallel", None) is not None:
            check_outcomes(loaded, index, {"ok"}, "a parallel step", sink)
        elif isinstance(getattr(step, "workflow", None), str) and step.workflow in workflows:
            check_outcomes(loaded, index, child_outcomes(workflows[step.workflow]),
                           f"workflow `{step.workflow}`", sink)
    for view in branch_views(loaded):
        step_checks(view, sink, workflows)


def env_checks(ctx: CheckContext, env: Env, loaded: Loaded) -> None:
    for view in branch_views(loaded):
        env_checks(ctx, env, view)
    flow = Flow(loaded, ctx.sink)
    for index, step in enumerate(loaded.model.steps):
        if getattr(step, "uses", None) is None:
            continue
        found = resolve_uses(ctx, env, loaded, index, step)
        if found is None:
            continue
        cap = found.capability
        if getattr(step, "foreach", None) is None:
            outcomes = set(cap.outcomes) if cap is not None and not found.contract_unknown else {"ok"}
            check_outcomes(loaded, index, outcomes, f"`{step.uses}`", ctx.sink)
        if cap is not None and not found.contract_unknown:
            flow.call_step(index, step, cap.input_schema, cap.output_schema, step.uses)
        if cap is not None:
            check_cache(loaded, index, step, cap, ctx.sink)
    check_secrets(loaded, env, ctx.sink)


def _under_environments(ctx: CheckContext, loaded: Loaded, envs: list[Env]) -> list[Diagnostic]:
    hits: dict[Diagnostic, list[Env]] = {}
    for env in envs:
        scoped = CheckContext(ctx.project, ctx.catalog, Sink())
        env_checks(scoped, env, loaded)
        for diagnostic in dict.fromkeys(scoped.sink.found):
            hits.setdefault(diagnostic, []).append(env)
    found = []
    for diagnostic, under in hits.items():
        deployments = [str(env.deployment) for env in under if env.deployment is not None]
        if len(under) < len(envs):
            names = ", ".join(f"`{name}`" for name in deployments)
            plural = "s" if len(under) > 1 else ""
            diagnostic = diagnostic.replace(message=f"{diagnostic.message} (under deployment{plural} {names})")
        if deployments and diagnostic.deployment is None:
            # Named even when every deployment of the workflow produces it, so that
            # `validate deployments/x.yaml` reports what x's bindings break in its workflow.
            diagnostic = diagnostic.replace(deployment=", ".join(deployments))
        found.append(diagnostic)
    return found
