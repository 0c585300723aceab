"""`${NAME}` references in a source's declared values (`env:`, `headers:`): how sources.yaml
names a token without holding it. One reading for every kind of source.

`${NAME}` is the environment variable NAME of the wfops process, `${NAME:-default}` gives a
default, and `$${` is a literal `${`. Every value a reference reads is declared to the
process's redactor as it is read, so no channel shows it (a server's stderr, an HTTP body,
an error message), whether or not a deployment lists it under `secrets:`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from wfops.errors import CapabilityError
from wfops.model.rules import ENV_REF
from wfops.redact import declare

__all__ = ["ENV_REF", "expand", "expand_all", "referenced"]


def referenced(value: str) -> list[str]:
    """The names `value` reads."""
    return [match.group(1) for match in ENV_REF.finditer(value)]


def expand_all(owner: str, key: str, values: Mapping[str, str]) -> dict[str, str]:
    """`values` with every reference filled from the environment; a reference to an unset
    variable without a default is a `CapabilityError` naming `owner` and `key.<name>`."""
    return {name: expand(owner, f"{key}.{name}", value) for name, value in values.items()}


def expand(owner: str, where: str, value: str) -> str:
    unset = [m.group(1) for m in ENV_REF.finditer(value) if m.group(1) not in os.environ and m.group(2) is None]
    if unset:
        raise CapabilityError(
            f"{owner}: `{where}` needs the environment variable {unset[0]}, which is not set",
            hint=f"export {unset[0]}=... before running wfops, or give a default: ${{{unset[0]}:-value}}")
    read = [os.environ[name] for name in referenced(value) if os.environ.get(name)]
    declare(read)
    return ENV_REF.sub(_filled, value).replace("$${", "${")


def _filled(match: re.Match[str]) -> str:
    name, default = match.group(1), match.group(2)
    return os.environ.get(name, default if default is not None else "")
