"""What a browser (`wfops ui`) shows of a project and its runs, as plain data: a page of the
run history with its counts, a workflow's graph with the path a run took, a run's trace with
its large values folded, and the project's workflows and deployments.

Every value here comes from the store or the project's files and is returned as JSON data;
a face renders it as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wfops.errors import InvalidArgument
from wfops.jsonvalues import json_size_over
from wfops.report.graph import graph_parts
from wfops.report.summary import taken_path
from wfops.store.rows import stamp

if TYPE_CHECKING:
    from wfops.api.runs import Run
    from wfops.engine.types import TraceEntry
    from wfops.loader.project import Project as LoadedProject
    from wfops.model.objects import Workflow

__all__ = ["FOLD_BYTES", "RUN_FOLD_BYTES", "RunsPage", "fold", "folded_entry", "graph_view", "overview", "utc_stamp"]

#: Values larger than this (bytes of JSON) are sent folded: a preview and the JSON Pointer
#: that `Project.run_value` answers with the whole value.
FOLD_BYTES = 2048
#: The run's own input, output and state are shown open up to this size.
RUN_FOLD_BYTES = 32_768
PREVIEW_CHARS = 160


@dataclass(frozen=True)
class RunsPage:
    """One page of the run history, newest first, and how many runs each status holds under
    the same filters (the status filter left out). `total`: the runs the filters match."""

    runs: list[Run]
    counts: dict[str, int]
    total: int
    offset: int
    limit: int

    def to_dict(self) -> dict[str, Any]:
        return {"runs": [_row(run) for run in self.runs], "counts": self.counts, "total": self.total,
                "offset": self.offset, "limit": self.limit}


def _row(run: Run) -> dict[str, Any]:
    """A history row: what a list shows, without the (possibly large) output."""
    return {"run_id": run.run_id, "deployment": run.deployment, "workflow": run.workflow,
            "status": run.status, "outcome": run.outcome, "steps": run.steps,
            "created_at": run.created_at, "updated_at": run.updated_at,
            "error": (run.error or {}).get("message") if run.error else None,
            "forked_from": run.forked_from}


def utc_stamp(text: str | None, argument: str) -> str | None:
    """An ISO 8601 time (with an offset, or UTC when it has none) as the store's UTC stamp."""
    if text is None or text == "":
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"{argument} {text!r} is not an ISO 8601 time",
                              argument=argument, hint="e.g. 2026-12-01T18:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return stamp(moment.astimezone(UTC))


def graph_view(workflow: Workflow, entries: Sequence[dict[str, Any]] = (), status: str | None = None,
               current: str | None = None) -> dict[str, Any]:
    """A workflow's nodes and edges (as the Mermaid and DOT drawings have them), with the
    top-level steps a run went through (`taken`) and the one it is at (`current`)."""
    nodes, edges = graph_parts(workflow)
    return {"workflow": workflow.name,
            "nodes": [{"key": n.key, "step": n.step, "kind": n.kind, "label": list(n.label), "group": n.group}
                      for n in nodes],
            "edges": [{"source": e.source, "target": e.target, "label": e.label, "dashed": e.dashed}
                      for e in edges],
            "taken": taken_path(entries, status or "") if entries else [],
            "current": current}


def folded_entry(entry: TraceEntry) -> dict[str, Any]:
    """A trace entry with each large value (input, output, a state write's value) folded."""
    found = entry.to_dict()
    base = f"/trace/{entry.seq}"
    for key in ("input", "output"):
        found[key] = fold(found[key], f"{base}/{key}")
    found["state_changes"] = [
        {**change, "value": fold(change.get("value"), f"{base}/state_changes/{i}/value")}
        for i, change in enumerate(found["state_changes"] or [])]
    return found


def fold(value: Any, pointer: str, limit: int = FOLD_BYTES) -> Any:
    """`value`, or when its JSON is over `limit` bytes, `{"$folded": pointer, "bytes", "preview"}`."""
    if value is None or isinstance(value, bool | int | float):
        return value
    size = json_size_over(value, limit)
    if size is None:
        return value
    import json  # deferred: only a large value needs its preview text

    preview = json.dumps(value, ensure_ascii=False, default=str)[:PREVIEW_CHARS]
    return {"$folded": pointer, "bytes": size, "preview": preview}


def overview(loaded: LoadedProject) -> dict[str, Any]:
    """The project's workflows (description, input schema, graph) and deployments (workflow,
    bindings, input, executor), by name."""
    workflows = []
    for name in sorted(loaded.workflows):
        model = loaded.workflows[name].model
        workflows.append({"name": name, "file": loaded.workflows[name].file, "description": model.description,
                          "input_schema": model.input, "graph": graph_view(model)})
    deployments = []
    for name in sorted(loaded.deployments):
        model = loaded.deployments[name].model
        executor = model.executor
        deployments.append({"name": name, "file": loaded.deployments[name].file, "workflow": model.workflow,
                            "description": model.description, "bindings": dict(model.bindings),
                            "input": model.input, "secrets": list(model.secrets), "drift": model.drift,
                            "executor": getattr(executor, "address", None) or executor.kind})
    return {"workflows": workflows, "deployments": deployments,
            "broken_files": sorted(loaded.broken_files)}
