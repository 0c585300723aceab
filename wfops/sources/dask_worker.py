"""The worker side of the Dask executor: a chunk of capability calls, as one Dask task.

A worker loads the project's python source (or, for a command or OpenAPI source, builds it
from its declaration, which the driver sends as `declared:<json>`) itself (from `WFOPS_PROJECT` when that is
set in the worker's environment, else from the driver's project path, which a worker on
the same machine or a shared filesystem sees), checks that the capability's contract,
computed from the code the worker really has, is the one the run was locked with, and
only then calls it. The answer is a plain record, never an exception: the driver turns
an error record into the failure a local call would have given (same type, same
message), and Dask keeps no failed task around to retry behind wfops's back. So one
failing call of a chunk never costs its chunk-mates their results.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError
from wfops.model.plain import load as plain_load
from wfops.sources.base import Source, StepContext
from wfops.sources.contract import raised
from wfops.sources.registry import load_declared_source, load_python_source

PROJECT_ENV = "WFOPS_PROJECT"
#: The prefix of a `module` argument that is a source's declaration (JSON), not a module.
DECLARED = "declared:"
DRIFT = "capability-drift"

# (project root, module, source id) -> the loaded source. A worker imports a module once;
# new code on a worker needs a worker restart (docs/distributed.md).
_loaded: dict[tuple[str, str, str], tuple[Source, dict[str, str]]] = {}
_loading = threading.Lock()  # a worker runs tasks in several threads: import once


#: One call of a chunk: (module, source id, capability name, expected contract hash, payload, context).
Call = tuple[str, str, str, str, dict[str, Any], dict[str, Any]]


def run_chunk(driver_root: str, calls: list[Call]) -> list[dict[str, Any]]:
    """Run each call in turn on this worker thread; one record per call (`call_on_worker`'s)."""
    return [call_on_worker(driver_root, *call) for call in calls]


def call_on_worker(driver_root: str, module: str, source_id: str, name: str, expected: str,
                   payload: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """Run capability `source_id.name` here; `{"outcome", "output", "seconds"}`, `{"error": {type, message}}`,
    or `{"exit": code}` for a node that called sys.exit."""
    try:
        source, hashes = _source(driver_root, module, source_id)
        found = hashes.get(name)
        if found is None:
            return _error("CapabilityError", f"source {source_id!r} on this worker has no capability {name!r}")
        if found != expected:
            return _error(DRIFT, f"{source_id}.{name} on worker {_worker_name()} does not match the run's lock "
                          f"(contract {found[:12]} on the worker, {expected[:12]} locked): "
                          "the worker runs other code; deploy the locked code to the workers and restart them")
        ctx = StepContext(context["run_id"], context["workflow"], context["deployment"], context["step"],
                          context["attempt"], context["idempotency_key"], dict(context.get("extra") or {}))
        started = time.perf_counter()
        result = source.call_here(name, payload, ctx)  # type: ignore[attr-defined]
        # The call's own time (not the source's first import), from which the driver sizes chunks.
        record = {"outcome": result.outcome, "output": result.output, "seconds": time.perf_counter() - started}
        if result.extra is not None:
            record["extra"] = result.extra
        return record
    except SystemExit as exc:
        return {"exit": exc.code if isinstance(exc.code, int | str) or exc.code is None else str(exc.code)}
    except Exception as exc:  # any failure of user code is the step's, reported as a local run reports it
        return _error(*raised(exc))


def _source(driver_root: str, module: str, source_id: str) -> tuple[Source, dict[str, str]]:
    """The source as this worker loaded it, with each capability's contract hash."""
    root = os.environ.get(PROJECT_ENV) or driver_root
    key = (root, module, source_id)
    found = _loaded.get(key)
    if found is not None:
        return found
    with _loading:
        found = _loaded.get(key)
        if found is None:
            if not Path(root).is_dir():
                raise WfopsError(f"worker {_worker_name()} has no project at {root}: set {PROJECT_ENV} in "
                                 "the worker's environment to the project's directory on that machine")
            if module.startswith(DECLARED):
                source = load_declared_source(Path(root), source_id, declared_spec(source_id, module))
            else:
                source = load_python_source(Path(root), source_id, module)
            hashes = {name: cap.contract_hash for name, cap in source.capabilities().items()}
            found = _loaded[key] = (source, hashes)
    return found


def declaration_of(source: Source) -> str:
    """What a worker needs to build a declared (command, OpenAPI) source: its declaration."""
    spec = getattr(source, "spec", None)
    data = spec.to_data() if spec is not None and hasattr(spec, "to_data") else {}
    return DECLARED + json.dumps(data, sort_keys=True)


def declared_spec(source_id: str, module: str) -> Any:
    declared = plain_load("sources", {"sources": {source_id: json.loads(module[len(DECLARED):])}})
    if declared is None:
        raise WfopsError(f"source {source_id!r}: this worker's wfops does not read the declaration the "
                         "driver sent; install the same wfops on the workers")
    return declared.sources[source_id]  # type: ignore[attr-defined]


def _worker_name() -> str:
    try:
        # deferred: distributed (~300 ms), present on a worker, only for naming it in a message
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def _error(type_: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message}}
