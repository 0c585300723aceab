"""The `wfops mcp` server: typed tools over the project's whole lifecycle.

Each tool is a thin async wrapper: it runs one plain function of `operations` in a
worker thread and returns its result model. `_guard` is the one error boundary: a
known error becomes an MCP error result (`isError`) carrying the documented error
shape, a part of wfops this build lacks an `Unavailable` error, and a bug a tool
error whose traceback goes to a crash log. `_respond` is the one place every result
is bounded to `max_chars`. `_Server.call_tool` refuses unknown and ill-typed arguments
in the same error shape, naming the argument. Nothing a client sends kills the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar

import anyio

# Context, Resolve, ElicitationResult: tool annotations resolve them here
from mcp.server.mcpserver import (
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from wfops import __version__
from wfops.api import Project, docs
from wfops.api.approvals import ClientTrust, Declaration, SourcesAwaitApproval
from wfops.api.scaffold import SCHEMA_KINDS, schema
from wfops.crashlog import report_crash
from wfops.daemon import in_daemon_thread
from wfops.errors import InvalidArgument, RefusedError, WfopsError
from wfops.exits import for_error
from wfops.mcpserver import advice, bounded, remote, schemas, wire
from wfops.mcpserver import operations as ops
from wfops.mcpserver.models import (
    CallResult,
    CapabilitiesResult,
    CapabilityResult,
    CheckResult,
    CompileResult,
    DiagnosticOut,
    DocsResult,
    Envelope,
    ErrorOut,
    FileResult,
    GraphResult,
    NextAction,
    ProjectResult,
    RunResult,
    RunsResult,
    SchedulesResult,
    SkeletonResult,
    TestsResult,
    TraceResult,
    ValidateResult,
    WriteResult,
    run_out,
)
from wfops.mcpserver.runs import Board
from wfops.redact import masked
from wfops.report.trace import describe

INSTRUCTIONS = """\
wfops: declarative workflows in git, authored, run and repaired through these tools.
Loop: list_project -> read_file -> patch_workflow / write_file (validated before anything is
written) -> compile (writes wfops.lock) -> start_run -> wait_run / show_run / read_trace;
an interrupted run waits for resume_run. Every result has ok, error, diagnostics (each with
a hint), next_actions ({tool, arguments, reason}: call them as given) and next_steps (text).
Results are bounded by max_chars; cut values are listed in `cuts` with the call that gets them.
Output schemas list each tool's own fields after this envelope; the shapes they name (RunOut,
DiagnosticOut, NextAction, ...) are defined in the resource wfops://schemas/results.
ok is false when the call failed (error says why; isError) or when the run it returns failed
(run.state failed, run.error says where; not isError: the call itself worked)."""

# Loading a project imports its python sources (sys.modules is process-wide) and
# compile writes wfops.lock: one project operation at a time. Store reads skip this,
# and a run holds it only while it starts.
_PROJECT = threading.Lock()
#: The longest `call_capability` timeout a client may ask for (a day).
MAX_CALL_SECONDS = 86_400.0
Asker = Callable[[SourcesAwaitApproval], Awaitable[bool]]
E = TypeVar("E", bound=Envelope)

Wait = Annotated[float, Field(ge=0, le=3600, description="Seconds to wait for the run to stop (0: return at once).")]
MaxChars = Annotated[int, Field(ge=bounded.MIN_MAX_CHARS, le=bounded.MAX_MAX_CHARS,
                                description="Result size limit (JSON chars); see cuts.")]
DEFAULT = bounded.DEFAULT_MAX_CHARS

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# Starts MCP servers (processes) or connects to them: not read-only, whatever else it does not change.
START = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
WRITE_FILE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                             open_world_hint=False)
EDIT = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                         open_world_hint=False)
LOCK = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
STOP = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
ACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)

AUTHORING_PROMPT = """\
You are writing a wfops workflow{goal}. Work only through the wfops tools:

1. list_project: the workflows, deployments and sources there are, and their files.
2. list_capabilities, then describe_capability for each one you may use: its input and
   output schemas, outcomes and annotations (a destructive tool deserves care).
3. new_workflow with the capability and a name gives a valid skeleton (required inputs
   bound from a generated input schema, outcomes routed); write=true saves it. Or read_file
   an existing workflow and make focused edits with patch_workflow (an RFC 6902 JSON Patch:
   add a step with {{"op": "add", "path": "/steps/-", "value": {{...}}}}, rebind an input
   with "replace" at /steps/N/with/KEY, route an outcome at /steps/N/on/OUTCOME).
4. Step kinds beyond `uses:` (search_docs finds each in the file format):
   - foreach: `foreach: $input.names` runs a capability (`uses:`) or a workflow (`workflow:`)
     per item, `$item`/`$index` bound in `with:` (`mode: parallel` and `concurrency: N` to
     fan out), `save:` the results in item order or `save_each:` through a reducer;
   - parallel: `parallel: {{a: [steps], b: [steps]}}` runs branches at once and joins them;
   - interrupt: `interrupt: approval` with `request`, `resume_schema` and `on:` per outcome
     stops the run until resume_run answers it (outcome and a payload fitting resume_schema).
5. Secrets: never put a token, password or API key in a file or a run input (inputs are
   stored). Bind it as `$secret.NAME` and list NAME under the deployment's `secrets:`; the
   value is read from the wfops server's environment (the `env` of its entry in the client's
   config). validate warns when the server lacks it.
6. A write that would add errors is refused with the diagnostics: read each hint, fix, retry.
7. A deployment (deployments/NAME.yaml: name, workflow, bindings, input, secrets) makes it
   runnable.
8. Tests: new_test scaffolds tests/WORKFLOW.wftest.yaml (one case per outcome, mocks from
   the contracts); fill in each case's expect, then run_tests (CI runs them too).
9. compile, then start_run and wait_run; read_trace shows each step; resume_run answers
   an interrupt or continues a run whose process died; fork_run reruns a finished run from
   a step with a new input. Follow each result's next_actions."""


#: Each tool's declaration as first built in this process, by the code of its function, with
#: the decorator's options it was built with.
_DECLARED: dict[Any, tuple[tuple[Any, ...], Tool]] = {}


class _Server(MCPServer):
    """Refuses unknown and ill-typed arguments in the documented error shape, naming the argument."""

    approval: _Approval | None = None  # what the `_ask_approval` resolver asks with

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, title: str | None = None,
                 description: str | None = None, annotations: ToolAnnotations | None = None,
                 icons: list[Any] | None = None, meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        # A tool's declaration (its argument model, input and output schemas) depends on its
        # code, not on the project its closure serves; building it costs ~6 ms a tool, so a
        # second server in one process (an embedding program, the test suite) reuses the first's.
        options = (name, title, description, annotations, icons, meta, structured_output)
        known = _DECLARED.get(fn.__code__)
        if known is None or known[0] != options or hasattr(fn, "__wrapped__"):  # a wrapper's code is shared
            known = _DECLARED[fn.__code__] = (options, Tool.from_function(
                fn, name=name, title=title, description=description, annotations=annotations,
                icons=icons, meta=meta, structured_output=structured_output))
        tool = known[1].model_copy(update={"fn": fn})
        self._tool_manager._tools[tool.name] = tool

    async def run_stdio_async(self) -> None:
        # Every line gets an answer: the wire guard answers what the SDK's reader would drop.
        stdin = wire.GuardedStdin(wire.claim_stdin())
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
            stdin.replies = write_stream
            low = self._lowlevel_server
            await low.run(read_stream, write_stream, low.create_initialization_options())

    async def list_tools(self) -> list[Any]:
        # Each result's shared shapes are named, not repeated (schemas.compact): the list stays small.
        return [tool.model_copy(update={"output_schema": schemas.compact(tool.output_schema),
                                        "input_schema": schemas.slim_input(tool.input_schema),
                                        "description": schemas.one_paragraph(tool.description or "")})
                for tool in await super().list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            known = ", ".join(sorted(t.name for t in self._tool_manager.list_tools()))
            return _error_result(ErrorOut(type="UnknownTool", message=f"there is no tool {name!r}",
                                          hint=f"tools: {known}"))
        accepted = set((tool.parameters or {}).get("properties") or {})
        unknown = sorted(set(arguments) - accepted)
        if unknown:
            return _error_result(ErrorOut(
                type="InvalidArgument", argument=unknown[0],
                message=f"{name} has no argument {unknown[0]!r}",
                hint=f"arguments of {name}: {', '.join(sorted(accepted)) or 'none'}"))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            first = cause.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            argument = str(first["loc"][0]) if first["loc"] else "arguments"
            return _error_result(ErrorOut(type="InvalidArgument", argument=argument,
                                          message=f"{name}: argument {where!r}: {first['msg']}",
                                          hint="the tool's input schema (tools/list) says what it takes"))


def build_server(project: Project, *, allow_client_sources: bool = False) -> Any:
    """The server for `project`, acting for its client: sources the client writes are held
    until a person approves them, unless `allow_client_sources` (the person's choice)."""
    project = project.acting_for(ClientTrust(allow_client_sources=allow_client_sources))
    app = _Server("wfops", title="wfops", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    board = Board(project, _PROJECT, _flush_stray_output)
    approval = _Approval(project)
    app.approval = approval

    # -- authoring ------------------------------------------------------------------------------

    @app.tool(title="List the project", annotations=READ)
    async def list_project(max_chars: MaxChars = DEFAULT) -> Annotated[CallToolResult, ProjectResult]:
        """Start here: the project's workflows (file, input schema, the deployments that run each),
        deployments, sources, and every file read_file can read."""
        return await _guard(ProjectResult, {}, max_chars, None, ops.list_project, project)

    @app.tool(title="Read a project file", annotations=READ)
    async def read_file(
            path: Annotated[str, Field(description="Relative to the project root, e.g. workflows/x.yaml; "
                                                   "YAML files and python sources only.")],
            line_numbers: Annotated[bool, Field(description="Prefix each line with its number.")] = False,
            start_line: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
            end_line: Annotated[int | None, Field(ge=1, description="Last line, included.")] = None,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, FileResult]:
        """Read a workflow, deployment, sources.yaml, test or python source before editing it;
        line numbers match the diagnostics'."""
        def locate(pointer: str, value: Any, result: dict[str, Any] | None = None) -> dict[str, Any] | None:
            if pointer != "/text":
                return None
            shown = str(value)[:bounded.STRING_HEAD].count("\n")
            return _get("read_file", "the rest of the file", path=path, line_numbers=line_numbers,
                        start_line=(start_line or 1) + shown, end_line=end_line)
        return await _guard(FileResult, {"path": path}, max_chars, locate, ops.read_file, project, path,
                            line_numbers, start_line, end_line, exclusive=False)

    @app.tool(title="Write a project file", annotations=WRITE_FILE)
    async def write_file(
            path: Annotated[str, Field(description="workflows/NAME.yaml, deployments/NAME.yaml, sources.yaml "
                                                   "or tests/**/NAME.wftest.yaml.")],
            text: Annotated[str, Field(description="The whole new YAML text.")],
            force: Annotated[bool, Field(description="Write even when the text adds errors.")] = False,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, WriteResult]:
        """Create or replace a workflow, deployment, sources.yaml or workflow test. The whole project is validated
        with the text in place first; a text that adds errors is refused (the file untouched)
        with the diagnostics, unless force. Prefer patch_workflow for a focused edit."""
        return await _guard(WriteResult, {"path": path}, max_chars, None, ops.write_file, project, path, text,
                            force)

    @app.tool(title="Patch a workflow or deployment", annotations=EDIT)
    async def patch_workflow(
            path: Annotated[str, Field(description="workflows/NAME.yaml, deployments/NAME.yaml, sources.yaml "
                                                   "or tests/**/NAME.wftest.yaml.")],
            patch: Annotated[list[dict[str, Any]], Field(description="RFC 6902 JSON Patch: ops add, remove, "
                                                                     "replace, move, copy, test; paths are JSON "
                                                                     "Pointers such as /steps/0/with/name or "
                                                                     "/steps/- (append).")],
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, WriteResult]:
        """A focused edit (add a step, rebind an input, route an outcome) that keeps the file's
        comments and formatting; validated like write_file and refused if it adds errors."""
        return await _guard(WriteResult, {"path": path}, max_chars, None, ops.patch_workflow, project, path,
                            patch)

    @app.tool(title="Scaffold a workflow", annotations=CREATE)
    async def new_workflow(
            capability: Annotated[str, Field(description="Concrete ref `<source id>.<capability>` to call.")],
            name: Annotated[str, Field(description="The workflow's name (lowercase, digits, . _ -).")],
            write: Annotated[bool, Field(description="Save it as workflows/NAME.yaml.")] = False,
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, SkeletonResult]:
        """A valid workflow that calls one capability: its required inputs bound from a generated
        input schema, every outcome routed. Returned as text; written only if write is true."""
        return await _guard(SkeletonResult, {"name": name}, max_chars, None, ops.new_workflow, project,
                            capability, name, write, ask=approval.asker(answer))

    @app.tool(title="Scaffold a workflow test", annotations=CREATE)
    async def new_test(
            workflow: Annotated[str, Field(description="The workflow's name.")],
            write: Annotated[bool, Field(description="Save it as tests/WORKFLOW.wftest.yaml.")] = False,
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, SkeletonResult]:
        """A workflow test file to start from: one case where every call and interrupt answers its
        first outcome, one per other outcome of each step, mocks fitting the capabilities'
        contracts (wfops.lock's for MCP sources). Returned as text; written only if write."""
        return await _guard(SkeletonResult, {"name": workflow}, max_chars, None, ops.new_test, project, workflow,
                            write, ask=approval.asker(answer))

    # -- catalog and checks ---------------------------------------------------------------------

    @app.tool(title="List capabilities", annotations=START)
    async def list_capabilities(
            source: Annotated[str | None, Field(description="Only this source; names an MCP source "
                                                            "to start it and list it live.")] = None,
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, CapabilitiesResult]:
        """Every capability (`uses: source.name`) a workflow step can call, with input/output schemas.
        Imports python sources; naming an MCP source starts it."""
        return await _guard(CapabilitiesResult, {}, max_chars, None, ops.capabilities, project, source,
                            name="list_capabilities", ask=approval.asker(answer))

    @app.tool(title="Describe a capability", annotations=START)
    async def describe_capability(
            ref: Annotated[str, Field(description="Concrete ref `<source id>.<capability>`.")],
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, CapabilityResult]:
        """Before using a capability: its input and output schemas, outcomes, docs and the
        annotations its source declares (an MCP tool's readOnlyHint, destructiveHint, ...).
        An MCP source's capability is read live: the server is started."""
        return await _guard(CapabilityResult, {}, max_chars, None, ops.describe_capability, project, ref,
                            ask=approval.asker(answer))

    @app.tool(title="Validate", annotations=READ)
    async def validate(
            paths: Annotated[list[str] | None, Field(description="Report only on these files or folders, "
                                                                 "relative to the project root (default: "
                                                                 "the whole project).")] = None,
            text: Annotated[str | None, Field(description="YAML text to check instead of files.")] = None,
            kind: Annotated[Literal["workflow", "deployment", "sources", "wftest"] | None,
                            Field(description="What `text` is (required with text).")] = None,
            path: Annotated[str | None, Field(description="The project file `text` is meant for, e.g. "
                                                          "workflows/x.yaml (it replaces that file).")] = None,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, ValidateResult]:
        """Syntax, schema and static checks, as `wfops validate`: diagnostics with line, column and
        hint. With text, checks YAML not yet saved. Never writes anything."""
        if text is not None:
            return await _guard(ValidateResult, {}, max_chars, None, ops.validate_text, project, text, kind, path)
        return await _guard(ValidateResult, {}, max_chars, None, ops.validate_files, project, list(paths or []))

    @app.tool(title="Call a capability", annotations=ACT)
    async def call_capability(
            ref: Annotated[str, Field(description="Concrete ref `<source id>.<capability>`, as in sources.yaml.")],
            input: Annotated[dict[str, Any],  # noqa: A002 - the contract's word
                             Field(description="The capability's input (its input_schema).")],
            timeout: Annotated[float | None, Field(gt=0, le=MAX_CALL_SECONDS, description=(
                "Seconds the call may take, as a step's `timeout:` (an MCP source's own `timeout:` "
                "applies too); default: as a step without one."))] = None,
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, CallResult]:
        """Try one capability on its own, checked as a run's step is: input, outcome and output
        against its contract. It really runs (side effects included), off the server's request
        loop: other tools keep answering while it goes."""
        def call() -> CallResult:
            return _released_when_ready(lambda ready: ops.call_capability(project, ref, input, timeout, ready))
        return await _guard(CallResult, {"ref": ref}, max_chars, None, call, exclusive=False,
                            name="call_capability", ask=approval.asker(answer), own_thread=True)

    @app.tool(name="compile", title="Compile the lock", annotations=LOCK)
    async def compile_(max_chars: MaxChars = DEFAULT,
                       answer: Approval = NOT_ASKED) -> Annotated[CallToolResult, CompileResult]:
        """After editing workflows or sources: validate, snapshot capability contracts (MCP servers
        are started) and write wfops.lock. Runs refuse a stale lock."""
        return await _guard(CompileResult, {}, max_chars, None, ops.compile_lock, project, name="compile",
                            ask=approval.asker(answer))

    @app.tool(title="Check the lock", annotations=START)
    async def check(
            live: Annotated[bool, Field(description="Also start MCP sources and compare their contracts.")] = False,
            max_chars: MaxChars = DEFAULT,
            answer: LiveApproval = NOT_ASKED,
    ) -> Annotated[CallToolResult, CheckResult]:
        """Compare the project with wfops.lock (stale lock, contract drift), as `wfops check`;
        live starts the MCP sources."""
        return await _guard(CheckResult, {"live": live}, max_chars, None, ops.check, project, live,
                            ask=approval.asker(answer))

    @app.tool(title="Run the workflow tests", annotations=READ)
    async def run_tests(
            paths: Annotated[list[str] | None, Field(description="Test files or folders, relative to the project "
                                                                 "root (default: tests/).")] = None,
            pattern: Annotated[str | None, Field(description="Only cases whose `file::name` contains "
                                                             "this.")] = None,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, TestsResult]:
        """Run the workflow tests (*.wftest.yaml) offline with mocked capabilities, as `wfops test`:
        each case passed, failed (with a diff) or error (the test itself is wrong)."""
        return await _guard(TestsResult, {}, max_chars, None, ops.run_tests, project, list(paths or []), pattern)

    @app.tool(title="Search the docs", annotations=READ)
    async def search_docs(
            query: Annotated[str, Field(min_length=1, max_length=500, description="Words to look for, e.g. "
                                                                                  "'foreach parallel mode'.")],
            limit: Annotated[int, Field(ge=1, le=20, description="At most this many sections.")] = 5,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, DocsResult]:
        """The documentation sections that best match the query (file format, step kinds, tests,
        secrets, runs, MCP); each page whole is the resource wfops://docs/PAGE."""
        return await _guard(DocsResult, {}, max_chars, None, ops.search_docs, query, limit, exclusive=False)

    @app.tool(title="Draw a workflow", annotations=READ)
    async def draw_graph(
            workflow: Annotated[str, Field(description="The workflow's name.")],
            format: Annotated[Literal["mermaid", "dot"],  # noqa: A002
                              Field(description="mermaid or dot.")] = "mermaid",
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, GraphResult]:
        """A workflow's steps and routes as mermaid or dot text."""
        return await _guard(GraphResult, {"workflow": workflow, "format": format}, max_chars, None,
                            ops.draw_graph, project, workflow, format)

    # -- runs -----------------------------------------------------------------------------------

    @app.tool(title="Start a run", annotations=ACT)
    async def start_run(
            deployment: Annotated[str, Field(description="The deployment's `name`.")],
            input: Annotated[dict[str, Any] | None,  # noqa: A002 - the contract's word
                             Field(description="Run input, merged over the deployment's defaults.")] = None,
            wait: Wait = 0,
            max_chars: MaxChars = DEFAULT,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, RunResult]:
        """Start a deployment's run once it passed its checks and is stored; it goes on in the
        server while every other tool keeps answering. Returns at once (wait 0) or after up to
        wait seconds. Follow it with wait_run, show_run and read_trace."""
        def begin() -> RunResult:
            try:
                run_id = board.start(deployment, lambda on_start: project.run(
                    deployment, dict(input or {}), on_start=on_start))
            except RefusedError as exc:
                raise ops.every_blocker(project, deployment, exc) from None
            return _driven(run_id, wait, first=True)
        return await _guard(RunResult, {}, max_chars, _run_locate(None), begin, exclusive=False, name="start_run",
                            ask=approval.asker(answer), own_thread=wait > 0)

    def _driven(run_id: str, wait: float, *, first: bool = False) -> RunResult:
        """A run the board drives, after at most `wait` seconds."""
        got, _done, crash = board.wait(run_id, wait)
        run = run_out(got)
        if isinstance(crash, WfopsError) and run.state in ("running", "orphaned", "interrupted"):
            raise crash  # the drive ended on a known error (e.g. an outcome the interrupt lacks)
        return ops.run_result(run, next_actions=advice.after_start(run)) if first else ops.run_result(run)

    @app.tool(title="Wait for a run", annotations=READ)
    async def wait_run(
            run_id: Annotated[str, Field(description="The run's id.")],
            timeout: Annotated[float, Field(ge=0, le=3600, description="Seconds to wait at most.")] = 30,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, RunResult]:
        """Wait until the run completes, fails or stops at an interrupt, or the timeout passes
        (done: false). A run whose process died is reported at once (resume_run it)."""
        return await _guard(RunResult, {}, max_chars, _run_locate(run_id), _driven, run_id, timeout,
                            exclusive=False, name="wait_run")

    @app.tool(title="Run a deployment (blocking)", annotations=ACT)
    async def run_deployment(
            deployment: Annotated[str, Field(description="The deployment's `name`.")],
            input: Annotated[dict[str, Any] | None,  # noqa: A002 - the contract's word
                             Field(description="Run input, merged over the deployment's defaults.")] = None,
            max_chars: MaxChars = DEFAULT,
            ctx: Context | None = None,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, RunResult]:
        """For short runs: execute a deployment to completion, failure or its first interrupt and
        return the run. Each committed step is a progress notification. Long runs: start_run."""
        def run() -> RunResult:
            return _released_when_ready(lambda ready: ops.run_deployment(
                project, deployment, dict(input or {}), on_step, lambda _run_id: ready()))
        on_step = _progress(ctx)
        return await _guard(RunResult, {}, max_chars, _run_locate(None), run, exclusive=False,
                            name="run_deployment", ask=approval.asker(answer), own_thread=True)

    @app.tool(title="Resume a run", annotations=ACT)
    async def resume_run(
            run_id: Annotated[str, Field(description="The run's id.")],
            outcome: Annotated[str | None, Field(description="The outcome that answers the open "
                                                             "interrupt (see run.interrupt.outcomes).")] = None,
            payload: Annotated[Any, Field(description="The interrupt's answer (its resume_schema).")] = None,
            wait: Wait = 30,
            max_chars: MaxChars = DEFAULT,
            ctx: Context | None = None,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, RunResult]:
        """Continue an interrupted run (answering it), one whose process died (from its last
        committed step), or a failed or cancelled one (redriving its failed step with a new
        attempt, the same idempotency key). Returns after at most wait seconds (done: false
        while it goes on: wait_run follows it)."""
        progress = _progress(ctx)

        def resume() -> RunResult:
            try:
                return _driven(board.start(run_id, lambda on_start: project.resume(
                    run_id, outcome, payload, on_step=progress, on_start=on_start)), wait)
            except RefusedError as exc:
                raise ops.secret_hint(exc) from None
        return await _guard(RunResult, {}, max_chars, _run_locate(run_id), resume, exclusive=False,
                            name="resume_run", ask=approval.asker(answer), own_thread=True,
                            refused=lambda: ops.refused_resume(project, run_id))

    @app.tool(title="Fork a run", annotations=ACT)
    async def fork_run(
            run_id: Annotated[str, Field(description="The run to fork (it is not changed).")],
            from_step: Annotated[str, Field(description="A top-level step id: the new run starts from the "
                                                        "state just before the run first ran it.")],
            input: Annotated[dict[str, Any] | None,  # noqa: A002 - the contract's word
                             Field(description="Keys overlaid on the original run's input.")] = None,
            wait: Wait = 30,
            max_chars: MaxChars = DEFAULT,
            ctx: Context | None = None,
            answer: Approval = NOT_ASKED,
    ) -> Annotated[CallToolResult, RunResult]:
        """A new run of the same stored workflow from one of its steps, with a changed input:
        the steps before from_step are not run again. Its run object names the original in
        forked_from. Returns after at most wait seconds, like start_run."""
        progress = _progress(ctx)

        def fork() -> RunResult:
            try:
                return _driven(board.start(run_id, lambda on_start: project.fork(
                    run_id, from_step, dict(input or {}), on_step=progress, on_start=on_start)), wait)
            except RefusedError as exc:
                raise ops.secret_hint(exc) from None
        return await _guard(RunResult, {}, max_chars, _run_locate(None), fork, exclusive=False,
                            name="fork_run", ask=approval.asker(answer), own_thread=True)

    @app.tool(title="Cancel a run", annotations=STOP)
    async def cancel_run(
            run_id: Annotated[str, Field(description="The run's id.")],
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, RunResult]:
        """Stop a run started with start_run (or by any process): an interrupted or orphaned run is
        cancelled at once, a driven one at its next step boundary (wait_run shows `cancelled`).
        Its committed steps are kept; resume_run continues it. A completed or failed run is refused."""
        return await _guard(RunResult, {}, max_chars, _run_locate(run_id), ops.cancel_run, project, run_id,
                            exclusive=False, name="cancel_run")

    @app.tool(title="Show a run", annotations=READ)
    async def show_run(
            run_id: Annotated[str, Field(description="The run's id.")],
            value: Annotated[str | None, Field(description="Return one value whole, in pages: a JSON Pointer "
                                                           "into the run (/output, /error, /interrupt/request) "
                                                           "or a step (/trace/SEQ/output, /trace/SEQ/input).")] = None,
            offset: Annotated[int, Field(ge=0, description="With value: where the page starts in its "
                                                           "JSON text.")] = 0,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, RunResult]:
        """One run: status, outcome, output, error and the open interrupt; or one of its values
        (a cut one) page by page."""
        return await _guard(RunResult, {}, max_chars, _run_locate(run_id), ops.show_run, project, run_id, value,
                            offset, max_chars, exclusive=False)

    @app.tool(title="List runs", annotations=READ)
    async def list_runs(
            deployment: Annotated[str | None, Field(description="Only this deployment's runs.")] = None,
            status: Annotated[Literal["running", "completed", "failed", "interrupted", "cancelled"] | None,
                              Field(description="Only runs in this status.")] = None,
            limit: Annotated[int, Field(ge=1, le=200, description="At most this many, newest first.")] = 20,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, RunsResult]:
        """Run history, newest first: each run's id, status, outcome and output; filter by
        deployment or status."""
        return await _guard(RunsResult, {}, max_chars, _runs_locate, ops.list_runs, project, deployment, status,
                            limit, exclusive=False)

    @app.tool(title="List schedules", annotations=READ)
    async def list_schedules(
            deployment: Annotated[str | None, Field(description="Only this deployment's schedule.")] = None,
            count: Annotated[int, Field(ge=0, le=50, description="Next times per entry.")] = 3,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, SchedulesResult]:
        """Every schedule entry of the deployments: its cron and time zone, its policies, its
        next times (UTC and local) and the last slot it started. Runs start when something
        outside calls `wfops schedule tick` (cron, a timer, a CronJob, CI)."""
        return await _guard(SchedulesResult, {}, max_chars, None, ops.list_schedules, project, deployment, count,
                            exclusive=False)

    @app.tool(title="Read a run's trace", annotations=READ)
    async def read_trace(
            run_id: Annotated[str, Field(description="The run's id.")],
            from_seq: Annotated[int | None, Field(description="First seq to return (`--from`).")] = None,
            limit: Annotated[int | None, Field(ge=1, le=ops.MAX_TRACE_PAGE, description="Entries per page.")] = 100,
            max_chars: MaxChars = DEFAULT,
    ) -> Annotated[CallToolResult, TraceResult]:
        """A run's step trace in order: each step's input, outcome, output, state writes and error."""
        return await _guard(TraceResult, {"run_id": run_id}, max_chars, _trace_locate(run_id), ops.read_trace,
                            project, run_id, from_seq, limit, exclusive=False)

    _resources(app)

    @app.prompt(name="author_workflow", title="Author a workflow",
                description="Guides an agent through writing, validating and running a workflow with these tools.")
    def author_workflow(goal: str = "") -> str:
        return AUTHORING_PROMPT.format(goal=f" that does this: {goal}" if goal else "")

    return app


# -- asking the client's user to approve the sources the client wrote ------------------------------

class _ApproveSources(BaseModel):
    approve: bool = Field(description="Yes: wfops may start or import these sources, exactly as declared.")


class _Approval:
    """Elicitation, where the client supports it: before a tool that may start sources runs,
    a resolver asks the client's user about each held declaration (the SDK sends the question
    mid-call or as an input request, as the protocol version wants). A yes is recorded through
    the core API as a person's approval, and only for the declarations the question showed."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def question(self, ctx: Any) -> str | None:
        if not _can_elicit(ctx):
            return None
        held = self.project.sources_awaiting_approval()
        return _approval_question(held) if held else None

    def asker(self, answer: Any) -> Asker | None:
        """What `_guard` calls when the tool is refused for held sources: True once the
        user's yes (to exactly the declarations this call's question showed) is recorded."""
        data = getattr(answer, "data", None)
        shown = _QUESTION.get()
        if getattr(answer, "action", None) != "accept" or not isinstance(data, _ApproveSources) or not data.approve:
            return None

        async def ask(exc: SourcesAwaitApproval) -> bool:
            if _approval_question(exc.held) != shown:
                return False  # sources.yaml changed after the question: what was shown is not what runs
            await anyio.to_thread.run_sync(self._approve, exc.held)
            return True
        return ask

    def _approve(self, held: list[Declaration]) -> None:
        for declaration in held:
            self.project.approve_source(declaration.source, by="elicitation", expected=declaration.key)


#: The question this tool call showed its user (set by the resolver, read by the tool body,
#: which runs in the same context).
_QUESTION: ContextVar[str | None] = ContextVar("wfops_approval_question", default=None)


async def _ask_approval(ctx: Context) -> Elicit[_ApproveSources] | None:
    """The resolver of every tool that may start or import a source."""
    approval = ctx.mcp_server.approval if isinstance(ctx.mcp_server, _Server) else None
    text = await anyio.to_thread.run_sync(approval.question, ctx) if approval is not None else None
    _QUESTION.set(text)
    return Elicit(text, _ApproveSources) if text is not None else None


async def _ask_approval_if_live(ctx: Context, live: bool = False) -> Elicit[_ApproveSources] | None:
    """`check` starts sources only when live."""
    return await _ask_approval(ctx) if live else None


#: A tool argument the client never sends: the user's answer about held sources, if asked.
Approval = Annotated[ElicitationResult[_ApproveSources], Resolve(_ask_approval)]
LiveApproval = Annotated[ElicitationResult[_ApproveSources], Resolve(_ask_approval_if_live)]
NOT_ASKED = DeclinedElicitation()


def _can_elicit(ctx: Any) -> bool:
    try:
        capabilities = ctx.request_context.session.client_capabilities
    except Exception:  # noqa: BLE001 - no session (an in-process call without a client): cannot ask
        return False
    return capabilities is not None and getattr(capabilities, "elicitation", None) is not None


def _approval_question(held: list[Declaration]) -> str:
    lines = [f"The MCP client wrote {'these sources' if len(held) > 1 else 'this source'} in sources.yaml. "
             f"To go on, wfops would start or import {'them' if len(held) > 1 else 'it'}: code that runs "
             "as your user. Approve exactly what is declared here?"]
    lines += [f"- {d.source} ({d.kind}): {d.shown()}" for d in held]
    return "\n".join(lines)


# -- resources (the file schemas and the docs are package data) ----------------------------------

def _resources(app: Any) -> None:
    app.resource(schemas.RESULTS_URI, name="tool result shapes", mime_type="application/schema+json",
                 description="JSON Schema of every tool's result and the shapes they share (RunOut, "
                             "DiagnosticOut, NextAction, ...).")(_results_schema(app))
    for kind in SCHEMA_KINDS:
        app.resource(f"wfops://schemas/{kind}", name=f"{kind} schema", mime_type="application/schema+json",
                     description=f"JSON Schema of a {kind} file.")(_schema_reader(schema, kind))
    for page in docs.page_names():
        app.resource(f"wfops://docs/{page}", name=f"docs: {page}", mime_type="text/markdown",
                     description=f"wfops documentation: {page}")(_doc_reader(page))


def _results_schema(app: Any) -> Callable[[], str]:
    def results() -> str:
        # The result models are the ones the tools declare: read from them, never listed apart.
        models = {tool.fn_metadata.output_model for tool in app._tool_manager.list_tools()}
        return schemas.results_schema(sorted((m for m in models if m is not None), key=lambda m: m.__name__))
    return results


def _schema_reader(schema: Callable[[str], str], kind: str) -> Callable[[], str]:
    def read() -> str:
        return schema(kind)
    read.__name__ = f"schema_{kind}"
    return read


def _doc_reader(page: str) -> Callable[[], str]:
    def read() -> str:
        return docs.read_page(page)
    read.__name__ = f"doc_{page.replace('-', '_')}"
    return read


# -- where a cut value can be read whole ---------------------------------------------------------

def _get(tool: str, reason: str, **arguments: Any) -> dict[str, Any]:
    return advice.act(tool, reason, **arguments).model_dump()


def _run_locate(run_id: str | None) -> bounded.Locate:
    def locate(pointer: str, value: Any, result: dict[str, Any] | None = None) -> dict[str, Any] | None:
        rid = run_id or ((result or {}).get("run") or {}).get("run_id")
        if not pointer.startswith("/run/") or rid is None:
            return None
        return _get("show_run", "this value, page by page", run_id=rid, value=pointer[len("/run"):])
    return locate


def _runs_locate(pointer: str, value: Any, result: dict[str, Any] | None = None) -> dict[str, Any] | None:
    parts = pointer.split("/")
    if len(parts) < 4 or parts[1] != "runs" or result is None:
        return None
    rid = result["runs"][int(parts[2])]["run_id"]
    return _get("show_run", "this value, page by page", run_id=rid, value="/" + "/".join(parts[3:]))


def _trace_locate(run_id: str) -> bounded.Locate:
    def locate(pointer: str, value: Any, result: dict[str, Any] | None = None) -> dict[str, Any] | None:
        parts = pointer.split("/")
        if len(parts) < 4 or parts[1] != "entries" or result is None:
            return None
        seq = result["entries"][int(parts[2])]["seq"]
        return _get("show_run", "this step's value, page by page", run_id=run_id,
                    value=f"/trace/{seq}/" + "/".join(parts[3:]))
    return locate


# -- the boundary -------------------------------------------------------------------------------

async def _guard(result: type[Envelope], required: dict[str, Any], max_chars: int, locate: Any,
                 fn: Callable[..., Envelope], *args: Any, exclusive: bool = True, name: str | None = None,
                 refused: Callable[[], list[NextAction]] | None = None, ask: Asker | None = None,
                 own_thread: bool = False) -> CallToolResult:
    """Run `fn(*args)` off the request loop and shape its result or error. `ask`: how to ask
    the client's user to approve held sources (then `fn` runs once more). `own_thread`: a call
    that may take long runs in a thread of its own, not one of the shared worker pool's."""
    def work() -> Envelope:
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

    run = _in_own_thread if own_thread else _in_pool
    try:
        try:
            done = await run(work)
        except SourcesAwaitApproval as exc:
            if ask is None or not await ask(exc):
                raise
            done = await run(work)
    except Exception as exc:  # noqa: BLE001 - the one boundary of the server
        done = _failure(result, required, exc, name or fn.__name__, refused)
    return _respond(done, max_chars, locate)


async def _in_pool(work: Callable[[], Envelope]) -> Envelope:
    # abandon_on_cancel: a client that cancels (or leaves) is not kept waiting for the thread
    return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)


async def _in_own_thread(work: Callable[[], Envelope]) -> Envelope:
    """`work()` in a daemon thread of its own: a call that never ends holds no pool worker,
    and never keeps the process alive once the client has gone."""
    return await in_daemon_thread(work, "wfops-mcp-call")


def _released_when_ready(fn: Callable[[Callable[[], None]], E]) -> E:
    """`fn(ready)` holding the project gate until it calls `ready()` (its sources are loaded),
    so the long part (a capability call, a run) never keeps other tools waiting."""
    _PROJECT.acquire()
    held = [True]

    def ready() -> None:
        if held[0]:
            held[0] = False
            _PROJECT.release()
    try:
        return fn(ready)
    finally:
        ready()


def _respond(done: Envelope, max_chars: int, locate: Any) -> CallToolResult:
    """The one place a result is shaped for the wire: plain-text advice, the size limit, isError."""
    if not done.next_steps:
        done.next_steps = advice.as_text(done.next_actions)
    data = masked(done.model_dump(mode="json"))  # a result may quote a server's stderr or a tool's text
    whole = json.loads(json.dumps(data))  # what locate reads (ids) stays uncut

    def where(pointer: str, value: Any) -> Any:
        return locate(pointer, value, whole) if locate is not None else None

    try:
        data, cuts = bounded.bound(data, max_chars - 256, where)  # room for the note added below
    except bounded.TooLarge as exc:
        data = Envelope(ok=False, error=ErrorOut(
            type="ResultTooLarge", message=str(exc),
            hint="ask for less: a smaller limit (list_runs, read_trace), line ranges (read_file), or a "
                 "larger max_chars")).model_dump(mode="json")
        cuts = []
    data["cuts"] = cuts
    if cuts and not any(c["get"] for c in cuts):
        data["next_steps"] = [*data.get("next_steps", []), "some values were cut (see cuts): call again "
                              "with a larger max_chars to see them whole"]
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))  # as bounded measures it
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data,
                          is_error=data.get("error") is not None)


def _error_result(error: ErrorOut) -> CallToolResult:
    data = Envelope(ok=False, error=error).model_dump(mode="json")
    data["next_steps"] = [f"{error.message} ({error.hint})" if error.hint else error.message]
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, sort_keys=True))],
                          structured_content=data, is_error=True)


def _failure(result: type[Envelope], required: dict[str, Any], exc: Exception, tool: str,
             refused: Callable[[], list[NextAction]] | None = None) -> Envelope:
    """A known error as the tool's result (`refused`: the advice when a refusal has no findings)."""
    fields = result.model_fields
    base = {k: v for k, v in required.items() if k in fields}
    if isinstance(exc, WfopsError) and "exit_code" in fields:
        base["exit_code"] = for_error(exc)  # as the CLI twin would exit (2: refused)
    if isinstance(exc, SourcesAwaitApproval):
        return result(ok=False, error=_error(exc), next_actions=advice.after_unapproved(exc, tool), **base)
    if isinstance(exc, RefusedError):
        found = list(exc.diagnostics)
        steps = refused() if refused is not None and not found else advice.after_refusal(found, tool)
        return result(ok=False, error=_error(exc), diagnostics=[DiagnosticOut.of(d) for d in found],
                      next_actions=steps, **base)
    if isinstance(exc, WfopsError):
        return result(ok=False, error=_error(exc), next_actions=advice.after_error(exc), **base)
    if isinstance(exc, NotImplementedError) or (isinstance(exc, ImportError)
                                                 and (exc.name or "").startswith("wfops")):
        return result(ok=False, error=ErrorOut(
            type="Unavailable", message=f"this build of wfops cannot do that yet ({type(exc).__name__}: {exc})",
            hint="upgrade wfops, or use the matching CLI verb"), **base)

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
    return ErrorOut(type=type(exc).__name__, message=exc.message, hint=exc.hint,
                    argument=exc.argument if isinstance(exc, InvalidArgument) else None)


def serve(project: Project, *, allow_client_sources: bool = False, parent: int | None = None) -> None:
    """Serve over stdio until the client disconnects, then exit the process.

    While serving, the SDK points fd 1 at stderr, so what project code prints cannot
    corrupt the protocol; but Python buffers `sys.stdout`, and a buffer flushed after
    the SDK restored fd 1 would still land on the wire. So each tool call flushes it
    (to stderr), and once serving ends fd 1 goes to stderr for good. Runs still going
    when the client leaves stay `running` in the store: resume_run continues them.

    The server never outlives its client: when stdin ends the process exits even if a call
    (a capability that never returns) is still going, and a watcher ends it when its parent
    dies (the parent pid changes from `parent`, default the one now) although stdin is still open.
    """
    _watch_parent(os.getppid() if parent is None else parent)
    try:
        build_server(project, allow_client_sources=allow_client_sources).run()
    finally:
        with suppress(OSError):
            os.dup2(2, 1)
        _flush_stray_output()
    _leave(0)


def serve_over_http(project: Project, *, host: str, port: int, allow_client_sources: bool = False) -> None:
    """The same server over streamable HTTP at http://HOST:PORT/mcp (`remote` says who may call)."""
    remote.token_for(host)  # a network host without a token is refused before anything starts
    remote.serve_http(build_server(project, allow_client_sources=allow_client_sources), host, port)


#: How often the parent watcher looks (seconds).
PARENT_POLL = 0.5


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        _leave(0)
    threading.Thread(target=watch, name="wfops-mcp-parent", daemon=True).start()


def _leave(code: int) -> None:
    """End the process now: threads still running a call are abandoned (a run they drive stays
    `running` in the store, and resume_run continues it)."""
    _flush_stray_output()
    with suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


def _flush_stray_output() -> None:
    with suppress(Exception):
        sys.stdout.flush()
