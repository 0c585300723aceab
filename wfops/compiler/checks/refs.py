"""References between files: `uses` -> a capability of a bound source, `workflow:` ->
a workflow of the project, and deployments -> their workflow and bound sources."""

from __future__ import annotations

from typing import Any

from wfops.compiler.checks.branches import branch_views
from wfops.compiler.checks.context import CheckContext, Env, Lookup
from wfops.compiler.checks.dataflow import Flow
from wfops.compiler.checks.jsontypes import child, closed, properties, sch
from wfops.compiler.checks.names import suggest
from wfops.compiler.checks.scope import Scope
from wfops.loader.project import Loaded


def resolve_uses(ctx: CheckContext, env: Env, loaded: Loaded, index: int, step: Any) -> Lookup | None:
    """Report an unresolvable `uses`; return the lookup when it resolves (or is contract-unknown)."""
    uses = step.uses
    if uses is None:
        return None
    where = ("steps", index, "uses")
    logical, _, name = uses.partition(".")
    concrete = env.concrete(logical)
    catalog = ctx.catalog
    if not catalog.declared(concrete):
        if env.bound(logical) or not catalog.sources_known:
            return None  # the deployment's binding is reported in the deployment file
        ctx.sink.error("unknown-source", f"`uses: {uses}` names source `{logical}`, which sources.yaml does not "
                       "declare", loaded, where, source=logical,
                       hint=suggest(logical, catalog.kinds, f"declare `{logical}` in sources.yaml, or bind "
                                    f"it in a deployment (`bindings: {{{logical}: <source id>}}`)"))
        return None
    if concrete in catalog.broken:
        return None  # the source failed to load; that is reported at sources.yaml
    found = ctx.lookup(env, uses)
    if found is None:
        caps = catalog.caps.get(concrete, {})
        via = f"source `{concrete}`" + (f" (bound to `{logical}`)" if concrete != logical else "")
        ctx.sink.error("unknown-capability", f"{via} has no capability `{name}`", loaded, where, source=concrete,
                       hint=suggest(name, caps, f"use one of the capabilities of `{concrete}` "
                                    "(`wfops caps list --source " + concrete + "`)"))
        return None
    if found.contract_unknown:
        ctx.sink.warning("contract-unknown", f"the contract of MCP capability `{concrete}.{name}` is not in "
                         "wfops.lock, so its inputs and outputs are not checked", loaded, where, source=concrete,
                         hint="run `wfops compile` to record it (validate never starts MCP servers)")
    return found


def check_workflow_refs(ctx: CheckContext, loaded: Loaded) -> None:
    for index, step in enumerate(loaded.model.steps):
        name = getattr(step, "workflow", None)
        if isinstance(name, str) and name not in ctx.workflows and not ctx.workflow_file_broken(name):
            ctx.sink.error("unknown-workflow", f"step `{step.id}` calls workflow `{name}`, which does not exist "
                           "in this project", loaded, ("steps", index, "workflow"),
                           hint=suggest(name, ctx.workflows, "write the `name:` of a file in workflows/"))
    for view in branch_views(loaded):
        check_workflow_refs(ctx, view)


def check_deployment(ctx: CheckContext, loaded: Loaded) -> None:
    model = loaded.model
    name = model.workflow_name
    if name not in ctx.workflows and not ctx.workflow_file_broken(name):
        ctx.sink.error("unknown-workflow", f"deployment `{model.name}` runs workflow `{name}`, which does not "
                       "exist in this project", loaded, ("workflow",),
                       hint=suggest(name, ctx.workflows, "write the `name:` of a file in workflows/"))
    if name in ctx.workflows:
        _check_input_defaults(ctx, loaded, ctx.workflows[name])
    if not ctx.catalog.sources_known:
        return
    for logical, concrete in model.bindings.items():
        if not ctx.catalog.declared(concrete):
            ctx.sink.error("unknown-source", f"binding `{logical}: {concrete}` names source `{concrete}`, which "
                           "sources.yaml does not declare", loaded, ("bindings", logical), source=concrete,
                           hint=suggest(concrete, ctx.catalog.kinds, "bind to a source id declared in "
                                        "sources.yaml (or `std`)"))


def _check_input_defaults(ctx: CheckContext, loaded: Loaded, workflow: Loaded) -> None:
    """The deployment's `input` defaults against the workflow's `input` schema (literals only)."""
    schema = sch(workflow.model.input)
    if schema is None:
        return
    flow = Flow(loaded, ctx.sink)
    props = properties(schema)
    name = workflow.model.name
    for key, value in loaded.model.input.items():
        if props is not None and key not in props and closed(schema):
            ctx.sink.error("unknown-input", f"workflow `{name}` has no input `{key}`", loaded, ("input", key),
                           hint=suggest(key, props, "remove it"), key=True)
            continue
        flow.value(value, child(schema, key), ("input", key), f"input `{key}` of workflow `{name}`",
                   Scope(workflow, "with"))
