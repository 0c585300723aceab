"""A run's input and secrets: the deployment's defaults under the caller's input, and
the declared secrets from the environment."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from wfops.errors import RefusedError
from wfops.jsonvalues import deep_merge as merge

__all__ = ["merge", "read_secrets"]


def read_secrets(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every declared secret from the environment; a missing one refuses the run."""
    env = os.environ if environ is None else environ
    names = list(names)
    missing = [n for n in names if n not in env]
    if missing:
        raise RefusedError(f"secret {', '.join(missing)} is not set in the environment",
                           hint="export it before `wfops run` (secrets are read from env vars, never stored)")
    return {n: env[n] for n in names}
