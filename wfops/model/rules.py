"""The file-format rules a JSON Schema cannot state, written once as plain functions.

The pydantic models call them from their validators (`wfops.model.errors.enforce`);
the plain loader (`wfops.model.plain`) calls the same functions on data it has
checked against the committed schemas. No pydantic here: the plain loader exists
so that a valid project is checked without importing it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wfops.model.paths import ROOTS, Location

#: A `${NAME}` or `${NAME:-default}` reference to the wfops process's environment, in the values
#: of a source's `env:`, `headers:` and `auth:`; `$${` is a literal `${`.
ENV_REF = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
CONDITION_OPERATORS = ("eq", "ne", "gt", "ge", "lt", "le", "in", "exists", "and", "or", "not")
#: The error types a step failure carries (`error.type`), as `retry.on` and `catch.errors` name
#: them -> when each happens. A capability's own exception keeps its own type (`ValueError`,
#: `CapabilityError`); `CallFailed` names all of those at once.
ERROR_TYPES: dict[str, str] = {
    "Timeout": "an attempt outlived the step's `timeout` (or a subworkflow, parallel step or run its own)",
    "SourceLost": "the source's server or connection was lost during the call (a transport error)",
    "CallFailed": "the capability raised an error of its own (any type not listed here, e.g. `ValueError`)",
    "InvalidInput": "the input does not match the capability's or the child workflow's input schema",
    "capability-drift": "a Dask worker's code for the capability does not match the run's lock",
    "InvalidOutput": "the output does not match the output schema, or lacks a required field `save:` maps",
    "UndeclaredOutcome": "the capability returned an outcome it does not declare",
    "SaveError": "a write the field's reducer or schema refuses",
    "ConcurrentWrite": "two parallel branches (or foreach items) write one field no reducer merges",
    "NotAList": "`foreach:` found something other than a list",
    "InterruptInForeach": "an interrupt step inside a foreach body or a parallel branch",
    "UnroutedOutcome": "a step ended in an outcome no route handles (a workflow bug: never caught)",
}
#: Failures another attempt cannot mend: they are never retried, whatever `retry.on` says.
NOT_RETRYABLE = frozenset({"InvalidInput", "capability-drift", "UnroutedOutcome", "ConcurrentWrite",
                           "InterruptInForeach", "UnknownCapability", "UnknownWorkflow", "InvalidWorkflow"})
#: Types the platform gives; any other type is a capability's own error (`CallFailed`).
_PLATFORM_TYPES = frozenset(ERROR_TYPES) | NOT_RETRYABLE | {"SystemExit", "KeyboardInterrupt", "StepLimit",
                                                              "UnknownStep", "UnstorableValue"}


#: The reducers that merge writes, so that two writers of one field (parallel branches, foreach
#: items) both count; under `replace` the last would silently win.
MERGING_REDUCERS = frozenset({"append", "extend", "union", "merge", "add", "min", "max"})


def writes_conflict(reducer: str | None, keys: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """Whether two concurrent writes to one state field (`keys` below it: `state.f.k` is `("k",)`)
    would overwrite each other. Whole-field writes merge under a merging reducer; a key write
    sets its key, so two writes overlap when one's keys lead to the other's."""
    if not keys and not other:
        return reducer not in MERGING_REDUCERS
    shared = min(len(keys), len(other))
    return keys[:shared] == other[:shared]


def concurrent_write_message(field: str, reducer: str | None, writers: str, path: str, other: str) -> str:
    how = (f"whose reducer `{reducer or 'replace'}` keeps only the last write" if path == other == f"state.{field}"
           else "and the writes overlap")
    return (f"{writers} both write state.{field} (`{path}` and `{other}`), {how}; "
            "nothing of either is saved")


def error_matches(error_type: str, names: tuple[str, ...] | list[str] | None) -> bool:
    """Whether a failure of `error_type` is one of `names` (None: every type). `CallFailed`
    stands for every error a capability raised itself."""
    if names is None:
        return True
    return error_type in names or ("CallFailed" in names and error_type not in _PLATFORM_TYPES)


_CONDITION_HINT = "write one operator, e.g. `if: {eq: [$state.x, 1]}` or `if: {and: [{exists: $state.x}, ...]}`"


class Broken(Exception):
    """A rule's verdict: what is wrong, its diagnostic code, how to fix it, and where below
    the checked value (`at`: keys and indexes) the problem lies."""

    def __init__(self, code: str, message: str, hint: str, at: Location = ()) -> None:
        super().__init__(message)
        self.code, self.message, self.hint, self.at = code, message, hint, at


def check_condition(value: Any, where: str = "the condition", at: Location = ()) -> None:
    if not isinstance(value, dict) or len(value) != 1:
        raise Broken("invalid-condition",
                     f"{where} must be a mapping with exactly one operator ({', '.join(CONDITION_OPERATORS)})",
                     _CONDITION_HINT, at)
    (op, operand), = value.items()
    if op not in CONDITION_OPERATORS:
        raise Broken("invalid-condition", f"unknown condition operator `{op}`",
                     f"use one of {', '.join(CONDITION_OPERATORS)}", at)
    if op in ("and", "or"):
        if not isinstance(operand, list) or not operand:
            raise Broken("invalid-condition", f"`{op}` takes a non-empty list of conditions",
                         f"write `{op}: [{{exists: $state.a}}, {{eq: [$state.b, 1]}}]`", (*at, op))
        for index, item in enumerate(operand):
            check_condition(item, f"each item of `{op}`", (*at, op, index))
    elif op == "not":
        check_condition(operand, "the operand of `not`", (*at, op))
    elif op == "exists":
        if not isinstance(operand, str) or not operand.startswith("$") or operand.startswith("$$"):
            raise Broken("invalid-condition", "`exists` takes one path", "write `{exists: $state.x}`", (*at, op))
    elif not isinstance(operand, list) or len(operand) != 2:
        raise Broken("invalid-condition", f"`{op}` takes a list of two operands",
                     f"write `{{{op}: [$state.x, 1]}}`; operands are paths or literals", (*at, op))


def check_step_id(value: str) -> None:
    if value == "end":
        raise Broken("reserved-step-id", "`id: end` is reserved: `end` is the route that finishes a workflow",
                     "give the step another id")


def check_routes(next_: str | None, on: Mapping[str, str] | None) -> None:
    if next_ is not None and on is not None and "ok" in on:
        raise Broken("conflicting-routes", "the step gives both `next` and `on.ok`",
                     "keep one: `next: <step>` is shorthand for `on: {ok: <step>}`")


def check_foreach_body(uses: str | None, workflow: str | None) -> None:
    if (uses is None) == (workflow is None):
        raise Broken("invalid-foreach", "a foreach step needs exactly one of `uses` or `workflow`",
                     "add `uses: <source>.<capability>` or `workflow: <name>` (not both) to say what runs "
                     "for each item")


def check_item_name(name: str) -> None:
    if name != "item" and name in ROOTS:
        raise Broken("invalid-foreach", f"`as: {name}` would hide the path root `${name}`",
                     "name the item something else, e.g. `as: doc` (then `$doc` in `with`)", ("as",))


def check_branches(branches: Mapping[str, list[Any]]) -> None:
    empty = [name for name, steps in branches.items() if not steps]
    if empty:
        raise Broken("invalid-parallel", f"branch `{empty[0]}` has no steps",
                     "give every branch at least one step (a subworkflow branch is one `workflow:` step)")


def check_branch_conditions(branches: Mapping[str, Any], when: Mapping[str, Any] | None) -> None:
    for name, condition in (when or {}).items():
        if name not in branches:
            raise Broken("invalid-parallel", f"`when` names no branch `{name}`",
                         "give a condition to a branch of `parallel:` (" + ", ".join(f"`{b}`" for b in branches)
                         + ")", ("when", name))
        check_condition(condition, f"the condition of branch `{name}`", ("when", name))


def check_bindings(bindings: Mapping[str, str]) -> None:
    if "std" in bindings:
        raise Broken("reserved-source-id", "`std` is the built-in source and cannot be rebound",
                     "remove the `std` binding; bind the logical sources your workflows name instead", ("std",))


def check_source_ids(sources: Mapping[str, Any]) -> None:
    if "std" in sources:
        raise Broken("reserved-source-id", "`std` is the platform source and cannot be redeclared",
                     "give the source another id")


def check_command_form(value: Any) -> None:
    """Before its type is checked: a shell string gets its own explanation."""
    if isinstance(value, str):
        raise Broken("shell-command", "`command` must be an argv list; a shell string is not allowed",
                     "write the command as a list, e.g. `command: [python, -m, server]`; wfops never runs a shell")


def check_argv_form(value: Any) -> None:
    """A command capability's `argv` is a list; one string would be a shell line."""
    if isinstance(value, str):
        raise Broken("shell-command", "`argv` must be a list; a shell string is not allowed",
                     'write it as a list, e.g. `argv: [python, scripts/wc.py, "{path}"]`; or add `shell: true` '
                     "and write `argv: [\"the line\"]`")


def check_spec_path(value: str) -> None:
    if value.startswith(("http://", "https://")):
        return  # fetched, and locked by the hash of its bytes
    if "://" in value:
        raise Broken("invalid-source", f"`spec` {value!r} is neither a file of the project nor an http(s) URL",
                     "give a path relative to the project root (e.g. `api/shop.openapi.yaml`) or an https:// URL")
    check_cwd(value)


def check_headers_need_url(url: str | None, headers: Mapping[str, str]) -> None:
    if headers and url is None:
        raise Broken("invalid-source", "`headers` apply only to a `url:` source",
                     "give a stdio server its token through `env:` instead")


def check_auth_needs_url(url: str | None, headers: Mapping[str, str], auth: Any) -> None:
    if auth is None:
        return
    if url is None:
        raise Broken("invalid-source", "`auth` applies only to a `url:` source",
                     "give a stdio server its credentials through `env:` instead", ("auth",))
    if any(name.lower() == "authorization" for name in headers):
        raise Broken("invalid-source", "`headers` cannot set `Authorization` when `auth` obtains the token",
                     "remove `Authorization` from `headers`, or remove `auth`", ("headers",))


def check_secret_reference(value: str) -> None:
    """A client secret is named, never written: sources.yaml is committed."""
    if not ENV_REF.search(value):
        raise Broken("invalid-source", "`client_secret` must be a `${NAME}` reference, not the secret itself",
                     'write `client_secret: "${NAME}"` and export NAME in the environment of wfops; '
                     "sources.yaml is committed with the project")


def check_cwd(value: str | None) -> None:
    # Caught here, in the file, where it can be seen; a symlink out is refused when the
    # server starts (wfops.sources.mcp).
    if value is not None and (value.startswith(("/", "\\")) or ".." in value.replace("\\", "/").split("/")):
        raise Broken("invalid-source", f"`cwd` {value!r} leaves the project",
                     "give a directory inside the project, relative to its root (e.g. `cwd: servers`)")


def check_transport(command: list[str] | None, url: str | None, env: Mapping[str, str], cwd: str | None) -> None:
    if (command is None) == (url is None):
        raise Broken("invalid-source", "an mcp source needs exactly one of `command` or `url`",
                     "use `command: [argv, ...]` for a stdio server or `url: http://...` for HTTP")
    if url is not None and (env or cwd):
        raise Broken("invalid-source", "`env` and `cwd` apply only to a `command` source",
                     "remove `env` and `cwd`, or start the server with `command:`")


_DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration_seconds(value: Any) -> float:
    """`30s`, `10m`, `1h`, `1d` or a number of seconds, as seconds (a step's `cache.ttl`,
    `wfops cache clear --older-than`); ValueError for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and value[-1:] in _DURATION_UNITS:
        try:
            seconds = float(value[:-1]) * _DURATION_UNITS[value[-1]]
        except ValueError:
            raise ValueError(f"{value!r} is not a duration") from None
    else:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not a duration: write `30s`, `10m`, `1h`, `1d` or a number "
                             "of seconds") from None
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{value!r} is not a positive duration")
    return seconds
