"""A run's input and secrets: the deployment's defaults under the caller's input, the
declared secrets from the environment, and the refusal of a secret given as input."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from wfops.errors import RefusedError, UsageError
from wfops.jsonvalues import deep_merge as merge
from wfops.redact import declare

__all__ = ["merge", "read_secrets", "refuse_secret_values"]


def read_secrets(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every declared secret from the environment; a missing one refuses the run. The values
    are declared to the process's redactor, so every channel masks them from now on."""
    env = os.environ if environ is None else environ
    names = list(names)
    missing = [n for n in names if n not in env]
    if missing:
        raise RefusedError(f"secret {', '.join(missing)} is not set in the environment",
                           hint="export it before `wfops run` (secrets are read from env vars, never stored)")
    values = {n: env[n] for n in names}
    declare(values.values())
    return values


def refuse_secret_values(value: Any, secrets: Mapping[str, str], what: str) -> None:
    """Refuse a caller's input (or resume payload) holding a declared secret's value: the run's
    input is stored as given, so it would outlive the environment variable. `what` names the
    value in the message (`--input`, `--payload`); the secret is named, never shown."""
    present = {name: secret for name, secret in secrets.items() if secret}
    if not present:
        return  # nothing to look for: a large input is not walked string by string for it
    for path, text in _strings(value, ()):
        for name, secret in present.items():
            if secret in text:
                where = f"{what} `{'.'.join(path)}`" if path else what
                raise UsageError(f"{where} holds the value of the secret {name}; a secret is not taken as "
                                 f"{what} (it would be stored with the run)",
                                 hint=f"read it in the workflow as `$secret.{name}` instead of passing it")


def _strings(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every string in a JSON-like value (keys included), with where it is."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield path + (str(key),), str(key)
            yield from _strings(item, path + (str(key),))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, path + (str(index),))
