"""Every diagnostic code wfops can emit, with a one-line summary: the single list.

Codes are stable; scripts and CI match on them. docs/diagnostics.md explains each
one (a test keeps the two in step, and checks that every code the code base
uses is listed here). `error()` and `warning()` refuse a code that is not here.
"""

from __future__ import annotations

from types import MappingProxyType

_CODES = {
    # -- files and YAML (the loader) ----------------------------------------------------
    "file-missing": "a file or path that does not exist, or is a directory",
    "file-unreadable": "a file that cannot be read, is not a regular file, or a directory that cannot be listed",
    "file-outside-project": "a project file that is a symlink to a file outside the project",
    "file-name-encoding": "a file name that is not valid UTF-8",
    "yaml-syntax": "YAML the parser rejects",
    "yaml-tab": "a tab where YAML allows only spaces",
    "yaml-encoding": "bytes that are not UTF-8, a NUL byte, a forbidden control character or a lone surrogate",
    "yaml-too-large": "a file, scalar or node count past the size limits",
    "yaml-too-deep": "nesting deeper than the depth limit",
    "yaml-empty": "a file with no YAML document",
    "yaml-not-mapping": "a top level that is not a mapping",
    "yaml-multiple-documents": "more than one YAML document in a file",
    "yaml-version": "a %YAML directive for a version other than 1.2",
    "yaml-anchor": "an anchor (&name)",
    "yaml-alias": "an alias (*name)",
    "yaml-merge-key": "a merge key (<<)",
    "yaml-tag": "an explicit tag other than a fitting core tag, or a %TAG directive",
    "yaml-duplicate-key": "the same key twice in one mapping",
    "yaml-key-type": "a mapping or list used as a key",
    "yaml-invalid-number": "a non-finite or overflowing float, or an overlong integer",
    # -- the file formats (schema errors) -----------------------------------------------
    "unknown-key": "a key the format does not have",
    "missing-key": "a required key is absent",
    "wrong-type": "a value of the wrong type",
    "invalid-value": "a value of the right type that is not allowed",
    "unknown-step-kind": "a step with no kind key",
    "ambiguous-step-kind": "a step with two kind keys",
    "reserved-step-id": "a step called `end`",
    "conflicting-routes": "a step with both `next:` and `on.ok`",
    "invalid-foreach": "a foreach step without exactly one of `uses` and `workflow`, or whose `as:` is a path root",
    "invalid-parallel": "a parallel step with a branch that has no steps, or a `when:` for no branch",
    "invalid-condition": "an `if:` that is not one structured operator",
    "shell-command": "an MCP `command:` written as a shell string",
    "invalid-source": "an MCP source without exactly one of `command`/`url`, or `env`/`cwd` on a `url` source",
    "reserved-source-id": "a source declared as `std`",
    # -- the project ----------------------------------------------------------------------
    "duplicate-workflow": "two workflow files use the same `name:`",
    "duplicate-deployment": "two deployment files use the same `name:`",
    "unknown-kind": "a file outside a project whose kind cannot be told",
    # -- workflow structure and routing ---------------------------------------------------
    "duplicate-step": "two steps share an id",
    "invalid-start": "`start:` names no step",
    "unknown-target": "a route names no step",
    "unrouted-outcome": "a step can end in an outcome no route handles",
    "undeclared-outcome": "a route for an outcome the step never produces",
    "unreachable-step": "no route from `start` leads to the step",
    "cache-side-effects": "a step caches a capability its source annotates as destructive",
    "cache-not-read-only": "an MCP tool's `cache:` default in sources.yaml, for a tool not annotated read-only",
    "interrupt-in-foreach": "a foreach step runs a workflow that waits at an interrupt",
    "interrupt-in-parallel": "a parallel branch has, or runs a workflow that has, an interrupt step",
    # -- references -----------------------------------------------------------------------
    "unknown-source": "a `uses:` or a binding names a source sources.yaml does not declare",
    "unknown-capability": "the (bound) source has no such capability",
    "contract-unknown": "an MCP capability whose contract wfops.lock does not hold",
    "unknown-workflow": "a `workflow:` names no workflow of the project",
    "subworkflow-cycle": "a workflow calls itself, directly or through others",
    "undeclared-secret": "a `$secret.NAME` a deployment running the workflow does not list",
    "secret-missing": "a secret a deployment lists that the environment of the wfops process lacks",
    "invalid-executor-address": "a Dask `executor.address` wfops cannot connect to (protocol, host or port)",
    "invalid-cron": "a schedule's `cron` that names no time (a bad field, or a date that never exists)",
    "unknown-timezone": "a schedule's `timezone` that is no IANA time zone",
    "short-window": "a schedule's `window` shorter than the interval between its times",
    "duplicate-schedule": "two schedule entries of one deployment with the same name (or cron and timezone)",
    # -- paths and state ------------------------------------------------------------------
    "invalid-path": "a `$...` value that is not a valid path",
    "undeclared-input": "`$input.x` where the input schema does not declare `x`",
    "path-not-allowed": "a path whose root is not defined where it stands",
    "unknown-state-field": "a read or write of a state field `state:` does not declare",
    "invalid-reducer": "a state field's reducer does not suit its type",
    "concurrent-write": "two parallel branches, or the items of one foreach, can write one state field no reducer merges",
    "optional-save": "a save that may write nothing (an optional output field, a conditional branch) into a field "
                     "without a default",
    # -- data-flow types ------------------------------------------------------------------
    "type-mismatch": "a value that cannot be of the type its destination expects, or a condition that never holds",
    "missing-input": "a required input is not bound",
    "unknown-input": "an input the schema does not list",
    "unknown-output-field": "an output field the producer does not have",
    "missing-output": "`output_schema` requires a field `output` does not project",
    "foreach-not-array": "`foreach:` iterates a path that is not an array",
    # -- embedded JSON Schemas ------------------------------------------------------------
    "invalid-schema": "an embedded JSON Schema that is not valid draft 2020-12",
    # -- sources ----------------------------------------------------------------------------
    "source-error": "a python source that cannot be loaded (module not found, malformed nodes)",
    "source-import-error": "importing a python source's module raised",
    "source-import-timeout": "importing a python source's module did not finish within the time limit",
    "source-spec-error": "an OpenAPI source whose document cannot be read or is not valid OpenAPI 3.0/3.1",
    "command-shell": "a command capability that runs through a shell (`shell: true`)",
    "source-unavailable": "an MCP server that could not be started or listed (live checks only)",
    "source-unapproved": "a source an MCP client wrote, not imported or started until a person approves it",
    # -- the lock -----------------------------------------------------------------------------
    "corrupt-lock": "wfops.lock is not valid lock JSON",
    "stale-lock": "wfops.lock differs from what `wfops compile` would write",
    "stale-schedule-workflow": "the scheduled GitHub workflow was written for other schedules than the deployments'",
    "capability-drift": "a used capability's contract differs from wfops.lock",
    "capability-missing": "a used capability the lock records is no longer offered by its source",
    "source-missing": "a used source the lock records is no longer declared",
    "pin-mismatch": "a deployment's pin does not match the workflow's current artifact",
    "mcp-not-contacted": "`wfops compile` could not record an MCP source's contracts",
    "unknown-deployment": "no deployment of that name",
    # -- workflow test files (*.wftest.yaml) ---------------------------------------------------
    "unknown-test-workflow": "a test file names a workflow (or deployment) the project does not have",
    "unknown-test-step": "a test names a step the workflow under test does not have",
    "unknown-test-ref": "a test mocks or allows a capability ref no step of the workflow uses",
    "duplicate-test-case": "two cases of one test file share a name",
}

#: code -> one-line summary (read-only).
CODES = MappingProxyType(_CODES)
KNOWN = frozenset(_CODES)


def summary(code: str) -> str | None:
    return _CODES.get(code)
