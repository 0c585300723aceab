"""A workflow's output keeps the key order it was declared in, on every run.

An artifact is canonical JSON (sorted keys: key order never reaches its hash), so a form
read back from the gate record or the store would list a workflow's `output` keys sorted,
while the run that compiled it listed them as declared. The declared order of each
workflow's `output` keys is kept beside the artifacts (in the gate record and the run's
meta, neither of which is hashed) and put back into the forms read there; an order that
does not name exactly the artifact's keys is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def declared_outputs(workflows: Mapping[str, Any], artifacts: Mapping[str, str]) -> dict[str, list[str]]:
    """Artifact hash -> its workflow's `output` keys in declared order, for those with an
    `output` mapping. `workflows`: name -> the workflow model (or a form) the run planned from."""
    found: dict[str, list[str]] = {}
    for name, workflow in workflows.items():
        output = workflow.get("output") if isinstance(workflow, Mapping) else getattr(workflow, "output", None)
        if isinstance(output, dict) and name in artifacts:
            found[artifacts[name]] = list(output)
    return found


def with_declared_output(form: Mapping[str, Any], keys: Any) -> Mapping[str, Any]:
    """`form` with its `output` keys in the order `keys` gives (when it names them all)."""
    output = form.get("output")
    if not isinstance(keys, list) or not isinstance(output, dict) or keys == list(output):
        return form
    if sorted(map(str, keys)) != sorted(output) or len(keys) != len(output):
        return form
    return {**form, "output": {key: output[key] for key in keys}}
