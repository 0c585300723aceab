"""The exception tree every public function of wfops raises from.

    WfopsError                           a known failure: `message` says what, `hint` how to fix it
    ├── UsageError                       bad arguments: a flag, a path, a JSON value
    │   ├── InvalidArgument              an API or tool argument unknown, ill-typed or out of range; names it
    │   └── api.jsonpatch.PatchError     a patch that is malformed or does not apply
    ├── RefusedError                     a run that may not start (input, validation, drift); `diagnostics` say why
    │   ├── engine.errors.InvalidInput   the run input or a resume payload does not match its schema
    │   └── api.approvals.SourcesAwaitApproval   (an MCP client's call) a source it wrote waits for a person's yes
    ├── ProjectNotFound                  no wfops project where one was asked for
    ├── UnknownRunError                  no run with that id in the store
    ├── StoreError                       the store is locked, corrupt, full or too new
    │   └── RunBusyError                 another process is driving this run
    ├── UnstorableValue                  a value the store cannot hold as JSON (the engine fails the step)
    ├── CallFailed                       `Project.call`: the capability failed; `error` is `{type, message, step}`
    ├── CapabilityError                  raised by capabilities (or sources) for a failed call: a step failure
    │   ├── StepTimeout                  the call outlived its step's `timeout`
    │   ├── SourceLost                   the source's server or connection was lost during the call
    │   ├── sources.contract.ContractError          the call broke its capability's contract
    │   ├── sources.dask_executor.RemoteCallError   the call failed on a Dask worker
    │   ├── sources.python.NodeExit      a node raised `SystemExit` or `KeyboardInterrupt`
    │   └── testing.mocks.TestProblem    a test case that is itself wrong (`wfops test`)
    ├── RunStopped                       a run stopped before its end without failing; resuming goes on
    ├── sources.modules.ModuleOutsideProject    a python source's module resolves outside the project
    ├── sources.modules.ImportTimedOut          a python source's import did not finish in time
    └── sources.python.NodeDefinitionError      a node whose signature or models wfops cannot use

Names with a module path are defined there (relative to `wfops`); the rest here. The
exceptions below are not part of the tree: each is raised and caught inside wfops, as
control flow or to carry a finding to the place that words it.

    engine.errors.StepFailed        a step failed: routed by `catch`, or it fails the run
    engine.run.Paused               unwinds every frame once an interrupt is committed
    engine.parallel._BranchFailed   a parallel branch failed: its siblings are cancelled
    engine.reducers.ReducerError    a write its reducer refuses (the step fails with `SaveError`)
    model.rules.Broken              a format rule's verdict, turned into a diagnostic
    model.plain._Unsure             the plain loader hands the document to the pydantic models
    model.plain._Undecided          the same, from a schema definition it cannot compile (past unions)
    model.paths.PathSyntaxError     a malformed value path (`$state.x`)
    loader.yaml.YamlLoadError       a YAML document that cannot be read, with its diagnostic
    jsonvalues._NotFinite           a JSON number wfops refuses (NaN, Infinity, an overflow)
    jsonvalues._TooLong             an integer with too many digits to read
    lockfile._Corrupt               a lock file of the wrong shape ("wfops.lock is corrupt: ...")
    store.protocol.SlotTaken        a schedule slot another tick claimed first: its run is not created
    schemacheck.PatternTimeout      a schema `pattern` that took too long to match
    mcpserver.bounded.TooLarge      an MCP result that does not fit even with every value cut
    cli.tablegen.Unsupported        a command the argument table cannot parse as typer would (left to typer)

The classes carry no exit codes: the faces map them to exit statuses at their own
boundary (`wfops.exits`), and the MCP server turns them into results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wfops.diagnostics import Diagnostic


class WfopsError(Exception):
    #: The stored run the error stopped: set by the runner on every error raised after the
    #: run was stored, so a caller can always name (and resume) it.
    run_id: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(WfopsError):
    pass


class InvalidArgument(UsageError):
    """An argument of an API or tool call that is unknown, ill-typed or out of range; names it."""

    def __init__(self, message: str, *, argument: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.argument = argument


class RefusedError(WfopsError):
    """The run was refused before it started; `diagnostics` says why."""

    def __init__(self, message: str, *, hint: str | None = None,
                 diagnostics: Sequence[Diagnostic] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])


class ProjectNotFound(WfopsError):
    pass


class UnknownRunError(WfopsError):
    pass


class StoreError(WfopsError):
    """`remedy` (e.g. "free disk space") is what to fix before trying again; the hint then
    says to try again, or, once a run was stored, how to resume it."""

    def __init__(self, message: str, *, hint: str | None = None, remedy: str | None = None) -> None:
        super().__init__(message, hint=hint or (f"{remedy}, then try again" if remedy else None))
        self.remedy = remedy


class RunBusyError(StoreError):
    pass


class UnstorableValue(WfopsError):
    """A value that cannot be written as JSON (non-finite, too long to print, not Unicode).

    Values are checked where they enter; this is the store's last word when one slipped
    through, so the engine can fail the run with the reason instead of leaving it `running`.
    """


class CallFailed(WfopsError):
    """A capability called on its own (`Project.call`, `wfops caps call`) failed as a run's step would."""

    def __init__(self, message: str, *, error: dict[str, Any], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.error = error


class CapabilityError(WfopsError):
    """Raised by capabilities (or sources) for a failed call. The engine turns it into a step failure."""

    error_type = "CapabilityError"


class StepTimeout(CapabilityError):
    error_type = "Timeout"


class SourceLost(CapabilityError):
    """A source's server process or connection was lost during the call (it crashed, was killed
    or exited). A step failure like any other; the source starts it again for the next call."""

    error_type = "SourceLost"


class RunStopped(WfopsError):
    """A run stopped before its end without failing: its state is kept at its last committed
    step and resuming it goes on from there (e.g. a step whose source's server died, with no
    retry left and no `catch:`)."""

    def __init__(self, message: str, *, run_id: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.run_id = run_id
