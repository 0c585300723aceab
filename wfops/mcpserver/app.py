"""The `wfops mcp` server: typed tools over the project's whole lifecycle.

Each tool is a thin async wrapper: it runs one plain function of `operations` in a
worker thread and returns its result model. `_guard` is the one error boundary:
known errors become `ok: false` results with the error and its hint, a part of
wfops this build lacks becomes an `Unavailable` error, and a bug becomes a tool
error (its traceback goes to a crash log). Nothing a client sends kills the server.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer  # Context: tool annotations resolve it here
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from wfops.api import Project
from wfops.cli.crash import report_crash
from wfops.cli.exits import for_error
from wfops.errors import RefusedError, WfopsError
from wfops.mcpserver import operations as ops
from wfops.mcpserver.advice import after_error, after_refusal
from wfops.mcpserver.models import (
    CallResult,
    CapabilitiesResult,
    CheckResult,
    CompileResult,
    DiagnosticOut,
    Envelope,
    ErrorOut,
    GraphResult,
    RunResult,
    RunsResult,
    TestsResult,
    TraceResult,
    ValidateResult,
)
from wfops.report.trace import describe

R = TypeVar("R", bound=Envelope)

INSTRUCTIONS = """\
wfops: declarative workflows in git. Typical loop: validate (files, or YAML text
before saving it) -> fix diagnostics (each has a hint) -> compile (writes wfops.lock)
-> run_deployment -> show_run / read_trace; an interrupted run waits for resume_run.
Every result has ok, error, diagnostics and next_steps."""

# Loading a project imports its python sources (sys.modules is process-wide) and
# compile writes wfops.lock: one project operation at a time. Store reads skip this.
_PROJECT = threading.Lock()


def build_server(project: Project) -> Any:
    app = MCPServer("wfops", instructions=INSTRUCTIONS, log_level="WARNING")

    @app.tool()
    async def list_capabilities(
            source: Annotated[str | None, Field(description="Only this source; names an MCP source "
                                                            "to start it and list it live.")] = None,
    ) -> CapabilitiesResult:
        """Every capability (`uses: source.name`) the project can call, with input/output schemas."""
        return await _guard(CapabilitiesResult, {}, ops.capabilities, project, source)

    @app.tool()
    async def validate(
            paths: Annotated[list[str] | None, Field(description="Report only on these files or folders, "
                                                                 "relative to the project root (default: "
                                                                 "the whole project).")] = None,
            text: Annotated[str | None, Field(description="YAML text to check instead of files.")] = None,
            kind: Annotated[Literal["workflow", "deployment", "sources"] | None,
                            Field(description="What `text` is (required with text).")] = None,
            path: Annotated[str | None, Field(description="The project file `text` is meant for, e.g. "
                                                          "workflows/x.yaml (it replaces that file).")] = None,
    ) -> ValidateResult:
        """Syntax, schema and static checks, as `wfops validate`: diagnostics with line, column and hint."""
        if text is not None:
            return await _guard(ValidateResult, {}, ops.validate_text, project, text, kind, path)
        return await _guard(ValidateResult, {}, ops.validate_files, project, list(paths or []))

    @app.tool()
    async def call_capability(
            ref: Annotated[str, Field(description="Concrete ref `<source id>.<capability>`, as in sources.yaml.")],
            input: Annotated[dict[str, Any],  # noqa: A002 - the contract's word
                             Field(description="The capability's input (its input_schema).")],
    ) -> CallResult:
        """Call one capability on its own, checked as a run's step is: input, outcome and output
        against its contract. A failure is an error with the type a run would record."""
        return await _guard(CallResult, {"ref": ref}, ops.call_capability, project, ref, input)

    @app.tool(name="compile")
    async def compile_() -> CompileResult:
        """Validate, snapshot capability contracts (MCP servers are started) and write wfops.lock."""
        return await _guard(CompileResult, {}, ops.compile_lock, project)

    @app.tool()
    async def check(
            live: Annotated[bool, Field(description="Also start MCP sources and compare their contracts.")] = False,
    ) -> CheckResult:
        """Compare the project with wfops.lock (stale lock, contract drift), as `wfops check`."""
        return await _guard(CheckResult, {"live": live}, ops.check, project, live)

    @app.tool()
    async def run_tests(
            paths: Annotated[list[str] | None, Field(description="Test files or folders, relative to the project "
                                                                 "root (default: tests/).")] = None,
            pattern: Annotated[str | None, Field(description="Only cases whose `file::name` contains "
                                                             "this.")] = None,
    ) -> TestsResult:
        """Run the workflow tests (*.wftest.yaml) offline with mocked capabilities, as `wfops test`:
        each case passed, failed (with a diff) or error (the test itself is wrong)."""
        return await _guard(TestsResult, {}, ops.run_tests, project, list(paths or []), pattern)

    @app.tool()
    async def run_deployment(
            deployment: Annotated[str, Field(description="The deployment's `name`.")],
            input: Annotated[dict[str, Any] | None,  # noqa: A002 - the contract's word
                             Field(description="Run input, merged over the deployment's defaults.")] = None,
            ctx: Context | None = None,
    ) -> RunResult:
        """Execute a deployment to completion, failure or its first interrupt.
        Each committed step is reported as a progress notification."""
        return await _guard(RunResult, {}, ops.run_deployment, project, deployment, dict(input or {}),
                            _progress(ctx))

    @app.tool()
    async def resume_run(
            run_id: str,
            outcome: Annotated[str | None, Field(description="The outcome that answers the open "
                                                             "interrupt (see run.interrupt.outcomes).")] = None,
            payload: Annotated[Any, Field(description="The interrupt's answer (its resume_schema).")] = None,
            ctx: Context | None = None,
    ) -> RunResult:
        """Continue an interrupted run (answering it) or a crashed one (from its last committed step)."""
        return await _guard(RunResult, {}, ops.resume_run, project, run_id, outcome, payload, _progress(ctx))

    @app.tool()
    async def show_run(run_id: str) -> RunResult:
        """One run: status, outcome, output, error and the open interrupt."""
        return await _guard(RunResult, {}, ops.show_run, project, run_id, exclusive=False)

    @app.tool()
    async def list_runs(deployment: str | None = None,
                        status: Literal["running", "completed", "failed", "interrupted"] | None = None,
                        limit: Annotated[int, Field(ge=1, le=200)] = 20) -> RunsResult:
        """Run history, newest first."""
        return await _guard(RunsResult, {}, ops.list_runs, project, deployment, status, limit, exclusive=False)

    @app.tool()
    async def read_trace(
            run_id: str,
            from_seq: Annotated[int | None, Field(description="First seq to return (`--from`).")] = None,
            limit: Annotated[int | None, Field(ge=1, le=ops.MAX_TRACE_PAGE)] = 100,
    ) -> TraceResult:
        """A run's step trace in order: each step's input, outcome, output, state writes and error."""
        return await _guard(TraceResult, {"run_id": run_id}, ops.read_trace, project, run_id, from_seq, limit,
                            exclusive=False)

    @app.tool()
    async def draw_graph(workflow: str, format: Literal["mermaid", "dot"] = "mermaid") -> GraphResult:  # noqa: A002
        """A workflow's steps and routes as mermaid or dot text."""
        return await _guard(GraphResult, {"workflow": workflow, "format": format}, ops.draw_graph, project,
                            workflow, format)

    return app


async def _guard(result: type[R], required: dict[str, Any], fn: Callable[..., R], *args: Any,
                 exclusive: bool = True) -> R:
    def work() -> R:
        try:
            if not exclusive:
                return fn(*args)
            with _PROJECT:
                return fn(*args)
        except SystemExit as exc:  # project code (a python source) must not end the server
            raise WfopsError(f"project code called exit({exc.code!r}) while wfops loaded it",
                             hint="a python source module must not call sys.exit() when imported") from None
        except KeyboardInterrupt:  # raised by project code in this worker thread, never by a signal
            raise WfopsError("project code raised KeyboardInterrupt while wfops loaded it",
                             hint="a python source module must not raise KeyboardInterrupt") from None
        finally:
            _flush_stray_output()

    try:
        return await anyio.to_thread.run_sync(work)
    except Exception as exc:  # noqa: BLE001 - the one boundary of the server
        return _failure(result, required, exc, fn.__name__)


def _failure(result: type[R], required: dict[str, Any], exc: Exception, tool: str) -> R:
    if isinstance(exc, WfopsError) and "exit_code" in result.model_fields:
        required = {**required, "exit_code": for_error(exc)}  # as the CLI twin would exit (2: refused)
    if isinstance(exc, RefusedError):
        found = list(exc.diagnostics)
        return result(ok=False, error=_error(exc), diagnostics=[DiagnosticOut.of(d) for d in found],
                      next_steps=after_refusal(found, exc.hint, tool), **required)
    if isinstance(exc, WfopsError):
        return result(ok=False, error=_error(exc), next_steps=after_error(exc), **required)
    if isinstance(exc, NotImplementedError) or (isinstance(exc, ImportError)
                                                 and (exc.name or "").startswith("wfops")):
        return result(ok=False, error=ErrorOut(
            type="Unavailable", message=f"this build of wfops cannot do that yet ({type(exc).__name__}: {exc})",
            hint="upgrade wfops, or use the matching CLI verb"), **required)

    report_crash(exc)  # the traceback goes to a crash log named on the server's stderr
    raise ToolError(f"internal error in wfops: {type(exc).__name__}: {exc} (a bug; the server's "
                    "stderr names the crash log)") from None


def _progress(ctx: Any) -> ops.OnStep | None:
    """Forward each committed step to the client as a progress notification, without making
    the run (in a worker thread, on its own event loop) wait for the client."""
    if ctx is None:
        return None

    loop = asyncio.get_running_loop()

    sending: set[Any] = set()  # the loop keeps only weak references to tasks

    def send(seq: int, message: str) -> None:
        task = loop.create_task(_quietly(ctx.report_progress(seq, None, message)))
        sending.add(task)
        task.add_done_callback(sending.discard)

    def on_step(entry: Any) -> None:
        loop.call_soon_threadsafe(send, entry.seq, describe(entry).strip())

    return on_step


async def _quietly(notification: Any) -> None:
    with suppress(Exception):  # a client that went away must not disturb the run
        await notification


def _error(exc: Any) -> ErrorOut:
    return ErrorOut(type=type(exc).__name__, message=exc.message, hint=exc.hint)


def serve(project: Project) -> None:
    """Serve over stdio until the client disconnects.

    While serving, the SDK points fd 1 at stderr, so what project code prints cannot
    corrupt the protocol; but Python buffers `sys.stdout`, and a buffer flushed after
    the SDK restored fd 1 would still land on the wire. So each tool call flushes it
    (to stderr), and once serving ends fd 1 goes to stderr for good.
    """
    try:
        build_server(project).run()
    finally:
        with suppress(OSError):
            os.dup2(2, 1)
        _flush_stray_output()


def _flush_stray_output() -> None:
    with suppress(Exception):
        sys.stdout.flush()
