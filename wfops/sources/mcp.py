"""MCP servers as wfops sources (docs/mcp.md): every tool of one server is a capability.

One session per source: `open()` starts a background task that owns the MCP `Client`
for the source's whole life (anyio requires a client's enter and exit in the same
task), lists the tools once, then serves calls handed to it through a queue. Each call
runs as a child task of that owner, so a caller that gives up (a step timeout) cancels
only its own request and the session stays usable. `close()` stops the owner, which
shuts the server down (stdin closed, then SIGTERM, then SIGKILL: the SDK's sequence).

Step logs. Every tools/call asks for log notifications at the source's `log_level` (the
per-request `_meta` opt-in of MCP 2026-07-28; `logging/setLevel` once on older servers). A
progress notification names its request (its token), so its message goes into the log of
the step that made the call. A log notification names no request (over stdio nothing can
say; over HTTP the SDK drops which response stream brought it), so it goes where that is
known: the one call in flight on the session; else the step that owns all the calls in
flight (a foreach, for its items), saying which calls it came from; else the run's own
log, saying which steps were calling, or that none was.

`import mcp` costs ~0.5 s, so it happens inside functions, only when a source opens.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, get_args

from wfops.errors import CapabilityError, SourceLost, StepTimeout
from wfops.model.rules import duration_seconds
from wfops.model.sources import McpLogLevel
from wfops.redact import mask, masked
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext
from wfops.sources.envrefs import expand_all
from wfops.sources.mcp_result import convert_result, tool_error_text
from wfops.sources.steplogs import ANY_ATTEMPT, RUN_LOG, Capture, note

if TYPE_CHECKING:
    import asyncio  # imported where used: `wfops validate` builds sources but never opens one

    from wfops.model.objects import McpSource

#: The output contract of a tool that declares no output schema.
ANY_RESULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"result": {}}}
#: Upper bound for a server to start and list its tools, whatever the call timeout is.
MAX_START_TIMEOUT = 60.0
#: How long `close()` waits for the SDK's own shutdown (bounded at ~4.5 s) before giving up.
CLOSE_TIMEOUT = 10.0
#: MCP error codes the SDK raises for a dead connection and an unanswered request.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
#: `_meta` key of every tools/call: where the step runs, so side-effecting tools can deduplicate
#: by `idempotency_key` (stable across retries and resumes of the step).
CONTEXT_META_KEY = "wfops/context"
#: `_meta` key of a request that opts in to log notifications from that level up (MCP 2026-07-28).
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
#: MCP's log levels, least severe first.
LOG_LEVELS: tuple[str, ...] = tuple(level for level in get_args(McpLogLevel) if level != "off")
#: How many of the calls in flight a log line names when it cannot say which one sent it.
NAMED_CALLS = 5
_PYTHON_NAMES = {"python", "python3", f"python3.{sys.version_info.minor}"}


@dataclass(eq=False)
class _Request:
    name: str
    payload: dict[str, Any]
    future: asyncio.Future[Any]
    context: dict[str, Any] = field(default_factory=dict)
    scope: Any = None  # the anyio CancelScope of the child task serving this request
    stderr_at: int = 0  # where the server's stderr stood when the call was made
    done: bool = field(default=False)
    where: tuple[str, str, int] = ("", "", 0)  # run id, step path, attempt: whose log it writes to


class McpClientSource:
    """A `Source` backed by one MCP server (stdio `command` or streamable HTTP `url`).

    Open, call and close in one event loop: the session lives in a task of that loop.
    """

    def __init__(self, source_id: str, spec: McpSource, root: Path, *,
                 start_timeout: float | None = None) -> None:
        self.id = source_id
        self.kind: SourceKind = "mcp"
        self.spec = spec
        self.root = Path(root)
        self.start_timeout = min(start_timeout or max(float(spec.timeout), 10.0), MAX_START_TIMEOUT)
        self._capabilities: dict[str, Capability] | None = None
        self._structured: set[str] = set()  # tools that declare an output schema
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._requests: asyncio.Queue[_Request | None] | None = None
        self._pending: set[_Request] = set()
        self._failure: str | None = None  # why the session ended on its own (crash, exit)
        self._stderr: IO[bytes] | None = None
        self._closed = False
        self._restarting: asyncio.Lock | None = None
        self._calling: list[_Request] = []  # sent and not yet answered, oldest first
        self._last_run: str | None = None  # the run of the latest call: its log takes lines sent between calls
        self._early = Capture()  # lines sent before any call, for the first run that calls

    # -- the Source protocol -------------------------------------------------------------

    async def open(self) -> None:
        """Start the server (or connect), list its tools; raises `CapabilityError` naming
        the source when it cannot start, exits at once or does not answer in time."""
        import asyncio  # deferred: asyncio (~33 ms), `wfops validate` builds sources but never opens one
        _quiet_sdk_logging()
        if self._owner is not None:
            if self._ready is not None:
                await asyncio.shield(self._ready)  # opened already, or being opened by another task
            return
        self._closed = False
        self._failure = None
        loop = asyncio.get_running_loop()
        self._ready = ready = loop.create_future()
        self._capabilities = None
        self._structured = set()
        self._requests = asyncio.Queue()
        self._owner = loop.create_task(self._own(ready), name=f"wfops-mcp-{self.id}")
        try:
            await asyncio.shield(ready)
        except BaseException:
            await self.close()
            raise

    def capabilities(self) -> Mapping[str, Capability]:
        if self._capabilities is None:
            raise CapabilityError(f"mcp source {self.id!r} is not open",
                                  hint="call `await source.open()` before listing its capabilities")
        return self._capabilities

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        import asyncio  # deferred: asyncio (~33 ms), `wfops validate` builds sources but never opens one
        if self._capabilities is not None and name not in self._capabilities:
            raise CapabilityError(f"mcp source {self.id!r} has no tool {name!r}")
        if self._ended():
            await self._restart()
        request = self._submit(name, payload, context)
        try:
            # The SDK enforces spec.timeout per request; the margin only guards against a stuck SDK.
            result = await asyncio.wait_for(asyncio.shield(request.future), self.spec.timeout + 5)
        except asyncio.CancelledError:
            self._cancel(request)
            raise
        except TimeoutError:
            self._cancel(request)
            raise StepTimeout(self._timeout_message(name)) from None
        cap = (self._capabilities or {}).get(name)
        converted = convert_result(self.id, name, result, structured=name in self._structured,
                                   declared=cap.output_schema.get("properties") if cap is not None else None)
        # A server may quote the credentials it was sent (`headers:`, `env:`): masked as they enter.
        return CallResult(converted.outcome, masked(converted.output),
                          masked(converted.extra) if converted.extra is not None else None)

    async def close(self) -> None:
        """Stop the session and the server process. Idempotent; never raises for a dead server."""
        import asyncio  # deferred: asyncio (~33 ms), `wfops validate` builds sources but never opens one
        owner, self._owner = self._owner, None
        self._closed = True
        if owner is None:
            return
        if self._ready is not None and not self._ready.done():
            owner.cancel()  # still starting: the owner is not reading requests yet
        elif self._requests is not None:
            self._requests.put_nowait(None)
        # asyncio.wait never raises the owner's exception, and lets our own cancellation through.
        done, _ = await asyncio.wait({owner}, timeout=CLOSE_TIMEOUT)
        if not done:
            owner.cancel()
            await asyncio.wait({owner}, timeout=CLOSE_TIMEOUT)
        self._fail_pending(f"mcp source {self.id!r} was closed")
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _ended(self) -> bool:
        """The session ended on its own (the server crashed, was killed or exited): not closed by us."""
        owner = self._owner
        return not self._closed and owner is not None and (self._failure is not None or owner.done())

    async def _restart(self) -> None:
        """Start the server again, so the call after a crash (a retry, the next step, a resume)
        meets a live session; concurrent callers restart it once. A server that will not come
        back fails this call like any other step failure."""
        import asyncio  # deferred: asyncio (~33 ms), `wfops validate` builds sources but never opens one
        if self._restarting is None:
            self._restarting = asyncio.Lock()
        async with self._restarting:
            if not self._ended():
                return  # another caller restarted it meanwhile
            await self.close()
            await self.open()

    # -- the owner task ------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        # deferred: asyncio (~33 ms), anyio (~9 ms) and mcp (~1.7 s), only once a server starts
        import asyncio

        import anyio
        from mcp import Client

        try:
            # One scope for the session's whole life: its deadline bounds start-up and is
            # lifted once the tools are listed (a scope must exit in the task that entered it).
            with anyio.CancelScope(deadline=anyio.current_time() + self.start_timeout) as scope:
                async with Client(self._transport(), logging_callback=self._on_log) as client, \
                        anyio.create_task_group() as group:
                    self._capabilities = await self._list_capabilities(client)
                    await self._ask_for_logs(client)
                    scope.deadline = math.inf
                    ready.set_result(None)
                    await self._serve(client, group)
                    group.cancel_scope.cancel()
            if scope.cancelled_caught and not ready.done():
                ready.set_exception(CapabilityError(
                    f"mcp source {self.id!r}: the server did not start and list its tools within "
                    f"{self.start_timeout:g}s{self._stderr_tail()}",
                    hint="check the command runs on its own; raise `timeout:` for a slow server"))
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a message naming the source
            if isinstance(exc, asyncio.CancelledError) and not ready.done():
                ready.cancel()  # open() itself was cancelled: nobody waits for a message
                raise
            message = mask(self._describe_failure(exc, started=ready.done()))  # it may quote an HTTP body
            if not ready.done():
                leaf = _first_leaf(exc)
                own = leaf.hint if isinstance(leaf, CapabilityError) else None  # e.g. an unset env variable
                ready.set_exception(CapabilityError(message, hint=own or self._start_hint(leaf)))
            else:
                self._failure = message
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if ready.done() and self._failure is None and not self._closed:
                self._failure = f"mcp source {self.id!r}: the session ended{self._stderr_tail()}"
            self._fail_pending(self._failure or f"mcp source {self.id!r} was closed")

    async def _serve(self, client: Any, group: Any) -> None:
        assert self._requests is not None
        while True:
            request = await self._requests.get()
            if request is None:
                return
            group.start_soon(self._run_request, client, request)

    async def _run_request(self, client: Any, request: _Request) -> None:
        import anyio  # deferred: anyio (~9 ms), only once a server runs

        meta: dict[str, Any] = {CONTEXT_META_KEY: request.context}
        if self.spec.log_level != "off":
            meta[LOG_LEVEL_META_KEY] = self.spec.log_level

        async def progress(value: float, total: float | None, message: str | None) -> None:
            of = f"/{total:g}" if total is not None else ""
            self._note(request.where, f"PROGRESS {self.id}: {value:g}{of}" + (f" {message}" if message else ""))

        with anyio.CancelScope() as request.scope:
            self._calling.append(request)
            try:
                result = await client.call_tool(request.name, request.payload,
                                                read_timeout_seconds=self.spec.timeout,
                                                progress_callback=progress, meta=meta)
            except Exception as exc:  # noqa: BLE001 - handed to the caller as a step failure
                self._settle(request, error=self._call_error(request, exc))
            else:
                self._settle(request, result=result)
            finally:
                self._calling.remove(request)
        if not request.done:
            self._settle(request, error=CapabilityError(f"mcp source {self.id!r}: call to "
                                                        f"{request.name!r} was cancelled"))

    async def _list_capabilities(self, client: Any) -> dict[str, Capability]:
        capabilities: dict[str, Capability] = {}
        cursor: str | None = None
        for _ in range(1000):  # pages; a server that loops its cursor must not hang us
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                hints = _annotations(tool)
                capabilities[tool.name] = Capability(
                    self.id, tool.name, dict(tool.input_schema or {"type": "object"}),
                    dict(tool.output_schema) if tool.output_schema else dict(ANY_RESULT_SCHEMA),
                    ("ok",), tool.description or "", hints, defaults=self._defaults(tool.name),
                    cache=tool_cache_default(self._declared(tool.name, "cache"), hints))
                if tool.output_schema:
                    self._structured.add(tool.name)
            cursor = page.next_cursor
            if cursor is None:
                break
        return capabilities

    def _declared(self, tool: str, key: str) -> Any:
        """One key of the tool's entry under `tools:` in sources.yaml (None when not given)."""
        declared = (getattr(self.spec, "tools", None) or {}).get(tool)
        return None if declared is None else getattr(declared, key)

    def _defaults(self, tool: str) -> dict[str, Any]:
        """The tool's `retry`/`timeout` defaults as sources.yaml declares them under `tools:`, as JSON
        (its `cache` default is not part of the contract: see `tool_cache_default`)."""
        declared = (getattr(self.spec, "tools", None) or {}).get(tool)
        if declared is None:
            return {}
        found: dict[str, Any] = {}
        if declared.retry is not None:
            found["retry"] = {key: value for key, value in vars(declared.retry).items()
                              if value is not None and key != "model_extra"}
        if declared.timeout is not None:
            found["timeout"] = declared.timeout
        return found

    # -- requests ------------------------------------------------------------------------

    def _submit(self, name: str, payload: dict[str, Any], context: StepContext) -> _Request:
        import asyncio  # deferred: asyncio (~33 ms), `wfops validate` builds sources but never opens one
        if self._owner is None or self._requests is None:
            raise CapabilityError(f"mcp source {self.id!r} is not open",
                                  hint="the runner opens every source before the first step")
        if self._failure is not None or self._owner.done():
            raise CapabilityError(self._failure or f"mcp source {self.id!r}: the session has ended")
        request = _Request(name, dict(payload), asyncio.get_running_loop().create_future(),
                           context=_context_meta(context), stderr_at=self._stderr_size(),
                           where=(context.run_id, context.step, context.attempt))
        self._calls_for(context.run_id)
        self._pending.add(request)
        self._requests.put_nowait(request)
        return request

    def _settle(self, request: _Request, *, result: Any = None, error: BaseException | None = None) -> None:
        request.done = True
        self._pending.discard(request)
        if request.future.done():
            return
        if error is not None:
            request.future.set_exception(error)
        else:
            request.future.set_result(result)

    def _cancel(self, request: _Request) -> None:
        if request.scope is not None:
            request.scope.cancel()
        if not request.future.done():
            request.future.cancel()
        self._pending.discard(request)

    def _fail_pending(self, message: str) -> None:
        for request in list(self._pending):
            self._settle(request, error=CapabilityError(message))

    # -- step logs -----------------------------------------------------------------------

    async def _ask_for_logs(self, client: Any) -> None:
        """Before MCP 2026-07-28, a server sends logs at the level `logging/setLevel` set (and
        may send them unasked); from it on, each call opts in through its `_meta`."""
        from mcp import MCPError  # deferred: mcp (~1.7 s), only once a server runs

        capabilities = getattr(client.session, "server_capabilities", None)
        if self.spec.log_level == "off" or getattr(capabilities, "logging", None) is None:
            return
        # The SDK warns (a UserWarning, on the user's terminal) that the request is deprecated
        # from 2026-07-28 on: this is the older server it is still meant for.
        with contextlib.suppress(MCPError), warnings.catch_warnings():  # refused: it logs as it likes
            warnings.simplefilter("ignore")
            await client.set_logging_level(self.spec.log_level)

    async def _on_log(self, params: Any) -> None:
        level = str(params.level)
        wanted = self.spec.log_level
        if wanted == "off" or (level in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted)):
            return  # below the level asked for (an older server sends every level)
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        line = f"{level.upper()} {params.logger or self.id}: {data}"
        calling = list(self._calling)
        if len(calling) == 1:
            self._note(calling[0].where, line)
            return
        if not calling:
            if self._last_run is None:
                self._early.write(f"[{self.id}: no call in flight] {line}\n")
            else:
                note(self._last_run, RUN_LOG, ANY_ATTEMPT, f"[{self.id}: no call in flight] {line}\n")
            return
        runs = sorted({request.where[0] for request in calling})
        owner = _common_step([request.where[1] for request in calling]) if len(runs) == 1 else None
        for run_id in runs:
            mine = [request.where[1] for request in calling if request.where[0] == run_id]
            others = len(calling) - len(mine)
            said = f"[{self.id}: from one of {_named(mine)}" + (f" or {others} calls of other runs" if others else "")
            note(run_id, owner if owner is not None else RUN_LOG, ANY_ATTEMPT, f"{said}] {line}\n")

    def _calls_for(self, run_id: str) -> None:
        """A call of this run is about to be made: lines heard before any call are its run's."""
        if self._last_run != run_id:
            self._last_run = run_id
            if early := self._early.text():
                note(run_id, RUN_LOG, ANY_ATTEMPT, early)
            self._early = Capture()

    def _note(self, where: tuple[str, str, int], line: str) -> None:
        note(where[0], where[1], where[2], line + "\n")

    # -- messages ------------------------------------------------------------------------

    def _call_error(self, request: _Request, exc: BaseException) -> CapabilityError:
        from mcp import MCPError  # deferred: mcp (~1.7 s), only once a server runs

        name = request.name
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT:
            return StepTimeout(self._timeout_message(name))
        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
            self._failure = (f"mcp source {self.id!r}: the server closed the connection "
                             f"(it exited or crashed) during tool {name!r}"
                             f"{self._stderr_tail(since=request.stderr_at)}")
            return SourceLost(self._failure, hint="see the server's stderr; the next call starts it again")
        # A tool's error text is the server's: it may hold the token the server was given.
        if isinstance(exc, MCPError):
            return CapabilityError(mask(f"mcp source {self.id!r}: tool {name!r}: {tool_error_text(exc)}"))
        return CapabilityError(mask(f"mcp source {self.id!r}: tool {name!r}: {type(exc).__name__}: {exc}"))

    def _timeout_message(self, name: str) -> str:
        return (f"mcp source {self.id!r}: tool {name!r} did not answer within "
                f"{self.spec.timeout:g}s (the source's `timeout:`)")

    def _describe_failure(self, exc: BaseException, *, started: bool) -> str:
        leaf = _first_leaf(exc)
        what = "the session failed" if started else "could not start the server"
        if isinstance(leaf, CapabilityError):
            return leaf.message
        if isinstance(leaf, FileNotFoundError):
            return f"mcp source {self.id!r}: command not found: {self._argv()[0]!r}"
        if isinstance(leaf, OSError) and not started and self.spec.command:
            return f"mcp source {self.id!r}: {what}: {leaf}"  # e.g. not executable
        if _is_mcp_error(leaf) and getattr(leaf, "code", None) == CONNECTION_CLOSED:
            where = "the server exited before it answered" if not started else "the server exited"
            return f"mcp source {self.id!r}: {where}{self._stderr_tail()}"
        refused = self._oauth_failure(leaf)
        if refused is not None:
            return refused[0]
        if self.spec.url is not None and not started:
            return f"mcp source {self.id!r}: cannot connect to {self.spec.url}: {_short(leaf)}"
        return f"mcp source {self.id!r}: {what}: {_short(leaf)}{self._stderr_tail()}"

    def _oauth_failure(self, leaf: BaseException) -> tuple[str, str] | None:
        """(message, hint) when the session failed in its OAuth grant (`auth:`)."""
        if self.spec.auth is None:
            return None
        # deferred: mcp (~1.7 s), only for a source with `auth:`
        from wfops.sources.mcp_auth import oauth_failure

        return oauth_failure(self.id, self.spec.auth, leaf)

    def _start_hint(self, leaf: BaseException | None = None) -> str:
        refused = self._oauth_failure(leaf) if leaf is not None else None
        if refused is not None:
            return refused[1]
        if self.spec.url is not None:
            return "check the server is running and `url:` points at its MCP endpoint (e.g. .../mcp)"
        return "run the `command:` of this source in the project root to see why it does not start"

    def _stderr_size(self) -> int:
        try:
            return self._stderr.seek(0, 2) if self._stderr is not None else 0
        except (OSError, ValueError):
            return 0

    def _stderr_tail(self, lines: int = 3, since: int = 0) -> str:
        """The server's last stderr lines (written after offset `since`), for error messages,
        with the declared secrets masked: a server may print the token it was given."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(max(since, self._stderr_size() - 4000))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        tail = [line for line in text.splitlines() if line.strip()][-lines:]
        return mask("; server stderr: " + " | ".join(s.strip() for s in tail)) if tail else ""

    # -- transport -----------------------------------------------------------------------

    def _argv(self) -> list[str]:
        argv = list(self.spec.command or [])
        # `python` means the interpreter running wfops, so servers see the same packages
        # (a venv need not be activated) and the lock is the same on every machine.
        if argv and argv[0] in _PYTHON_NAMES:
            argv[0] = sys.executable
        return argv

    def _env(self) -> dict[str, str]:
        """`env:` with `${NAME}` / `${NAME:-default}` taken from wfops's own environment, so a
        token reaches the server without being written into the committed sources.yaml."""
        return expand_all(f"mcp source {self.id!r}", "env", self.spec.env)

    def _cwd(self) -> Path:
        cwd = (self.root / self.spec.cwd) if self.spec.cwd else self.root
        if not cwd.is_dir():
            raise CapabilityError(f"mcp source {self.id!r}: cwd {str(cwd)!r} is not a directory",
                                  hint="`cwd:` is relative to the project root")
        # `..`, an absolute path or a symlink out of the project would start the server (and
        # let it read relative paths) wherever a pull request points.
        if not cwd.resolve().is_relative_to(self.root.resolve()):
            raise CapabilityError(f"mcp source {self.id!r}: cwd {self.spec.cwd!r} is outside the project",
                                  hint="`cwd:` must be a directory inside the project root")
        return cwd

    def _transport(self) -> Any:
        if self.spec.url is not None:
            auth = self.spec.auth
            if not self.spec.headers and auth is None:
                return self.spec.url
            # deferred: mcp and httpx2 (~1.7 s), only once a server starts
            from mcp.client.streamable_http import streamable_http_client

            from wfops.sources.http import same_host_client
            from wfops.sources.mcp_auth import oauth_client

            if auth is not None:
                client = oauth_client(self.id, self.spec.url, self.spec.headers, auth)
            else:
                headers = expand_all(f"mcp source {self.id!r}", "headers", self.spec.headers)
                client = same_host_client(self.spec.url, headers, timeout=None, owner=f"mcp source {self.id!r}")
            return _owning(self.spec.url, client, streamable_http_client)
        # deferred: mcp (~1.7 s), only once a server starts
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        argv = self._argv()
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=self._env(),
                                       cwd=str(self._cwd()))
        # The server's stderr goes to a file: its logs stay off the user's terminal and
        # its last lines explain a crash.
        self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 - closed by close()
            mode="w+b")
        return stdio_client(params, errlog=self._stderr)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def _owning(url: str, client: Any, transport: Any) -> AsyncIterator[Any]:
    """The SDK's HTTP transport over our own client (which carries the headers), closing the
    client with it: the SDK closes only a client it made."""
    async with client, transport(url, http_client=client) as streams:
        yield streams


class _OneLineHandler(logging.Handler):
    """The SDK logs with `logger.exception` (e.g. for every stdout line of a server that is
    not JSON-RPC); with logging unconfigured (the CLI), Python's last-resort handler would
    print those tracebacks on the user's terminal. One line instead."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            exc = record.exc_info[1] if record.exc_info else None
            if message == "OAuth flow error":
                return  # the SDK raises it too: it is the source's failure, reported once, as its error
            if message.startswith("Failed to parse JSONRPC message"):
                message = ("an MCP server wrote a line that is not JSON-RPC to its stdout "
                           "(a server must log to stderr); the line was ignored")
                value = _bad_input(exc)
                if value:
                    message += f": {value}"
            elif exc is not None:
                message += f": {_short(exc)}"
            # The line may be anything the server printed, the token it was given included.
            sys.stderr.write(mask(f"wfops: warning: {message.splitlines()[0] if message else record.levelname}\n"))
        except Exception:  # noqa: BLE001 - logging must never break a run
            self.handleError(record)


def _quiet_sdk_logging() -> None:
    logger = logging.getLogger("mcp.client")
    if not any(isinstance(h, _OneLineHandler) for h in logger.handlers):
        handler = _OneLineHandler(logging.WARNING)
        # Propagation stays on: an application that configured logging still gets the records.
        logger.addHandler(handler)


def _bad_input(exc: BaseException | None) -> str:
    """The offending line of a pydantic JSON error (its `input`), shortened."""
    errors = getattr(exc, "errors", None)
    try:
        value = errors()[0].get("input") if callable(errors) else None
    except Exception:  # noqa: BLE001 - only decoration for a message
        return ""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


def tool_cache_default(declared: Any, hints: Mapping[str, Any]) -> bool | float | None:
    """A tool's step cache default from its entry's `cache:` under `tools:` in sources.yaml: applied to a tool
    its server annotates read-only, or one the entry opts in (`unannotated: true`); never to
    one annotated destructive."""
    if declared is None or declared is False or hints.get("destructiveHint") is True:
        return None
    opted = bool(getattr(declared, "unannotated", False))
    if hints.get("readOnlyHint") is not True and not opted:
        return None
    ttl = getattr(declared, "ttl", declared)
    if ttl is None or ttl is True:
        return True
    return duration_seconds(ttl)


def _annotations(tool: Any) -> dict[str, Any]:
    """The tool's declared hints (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint)."""
    hints = getattr(tool, "annotations", None)
    return hints.model_dump(by_alias=True, exclude_none=True) if hints is not None else {}


def _named(steps: list[str]) -> str:
    shown = ", ".join(steps[:NAMED_CALLS])
    return shown + (f", ... ({len(steps)} calls)" if len(steps) > NAMED_CALLS else "")


def _common_step(steps: list[str]) -> str | None:
    """The innermost step that contains every one of these step paths (`each` for `each[0]` and
    `each[3]/fetch`), or None when they share none."""
    def ancestors(path: str) -> list[str]:
        cuts = [i for i, char in enumerate(path) if char in "/["]
        return [path[:i] for i in cuts] + [path]

    shared = set(ancestors(steps[0]))
    for step in steps[1:]:
        shared &= set(ancestors(step))
    return max(shared, key=len) if shared else None


def _context_meta(context: StepContext) -> dict[str, Any]:
    return {"run_id": context.run_id, "workflow": context.workflow, "deployment": context.deployment,
            "step": context.step, "attempt": context.attempt, "idempotency_key": context.idempotency_key}


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _is_mcp_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "MCPError"


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
