"""What stands between a deployment and its run beyond the project's files: the secrets this
process's environment lacks. `validate` warns of them (by name) before a run is refused, and a
refused run lists them next to the validation and lock errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from wfops.diagnostics import Diagnostic, warning
from wfops.loader.project import load_project


def missing_secrets(root: Path, deployment: str | None = None,
                    environ: Mapping[str, str] | None = None) -> list[Diagnostic]:
    """A `secrets-missing` warning for each secret a deployment lists (only `deployment`'s, if
    given) that the environment lacks: the name only, never a value."""
    env = os.environ if environ is None else environ
    found = []
    for name, loaded in sorted(load_project(root).deployments.items()):
        if deployment is not None and name != deployment:
            continue
        for index, secret in enumerate(loaded.model.secrets or []):
            if secret not in env:
                found.append(warning(
                    "secret-missing", f"deployment {name} needs the secret {secret}, which is not set in the "
                    "environment of this wfops process, so its runs are refused", loaded.file,
                    loaded.doc.at(("secrets", index)), deployment=name,
                    hint=f"set the environment variable {secret} for the process that runs wfops (an MCP "
                         "client: in the `env` of its wfops server entry, then restart the server)"))
    return found
