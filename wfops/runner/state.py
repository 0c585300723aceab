"""A stored run's input and state as `runs show` reports them, redacted like its trace."""

from __future__ import annotations

import os
from typing import Any

from wfops.compiler.artifact import load_artifact
from wfops.engine.frame import new_frame
from wfops.engine.plan import compile_workflow
from wfops.errors import WfopsError
from wfops.redact import Redactor
from wfops.store.protocol import RunRecord, Store


def shown_input_and_state(store: Store, record: RunRecord) -> tuple[Any, dict[str, Any] | None]:
    """(input, state): the state as of the run's last committed step, rebuilt from the trace's
    writes (which were redacted when committed; None when the run's artifact is unreadable); the input with the run's secrets masked (those
    its deployment declares and this process's environment holds)."""
    snapshot = record.snapshot
    state: dict[str, Any] | None = None
    try:
        stored = store.run_workflows(snapshot.run_id).get(snapshot.workflow)
        if stored is not None:
            plan = compile_workflow(load_artifact(stored[1]))
            state = new_frame(plan, snapshot.input, trace=store.trace(snapshot.run_id)).state
    except (WfopsError, ValueError):
        state = None  # a store missing the run's artifact still shows the run, without its state
    secrets = [os.environ[name] for name in record.meta.get("secrets") or [] if os.environ.get(name)]
    return Redactor(secrets).redact(snapshot.input), state
