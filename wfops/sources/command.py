"""Programs as wfops sources (`kind: command`, docs/sources.md): each declared capability runs
one program per call, its stdout the output.

No shell: `argv` is a list, and a `"{field}"` placeholder fills one argument (or part of one)
with an input field, so a value with spaces or quotes stays one argument. `shell: true` runs
the one string `argv` holds through `/bin/sh -c`, each placeholder shell-quoted; validate warns.
Each call runs in a new process group, killed whole on timeout (a script's children too).
The contract pins the executable as declared and the sha256 of every file of the repository
the command line names (the script it runs), so an edited script is drift.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shlex
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.errors import CapabilityError, StepTimeout, UsageError
from wfops.jsonvalues import parse_json
from wfops.redact import mask, masked
from wfops.schemacheck import first_error
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext
from wfops.sources.envrefs import expand_all
from wfops.sources.modules import note_consulted

if TYPE_CHECKING:
    from wfops.model.objects import CommandCapability, CommandSource

#: `{field}` in an argument: the input field of that name.
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The stderr lines a failure quotes.
STDERR_LINES = 5
#: stderr kept per call (its tail explains a failure; the rest is dropped).
STDERR_KEEP = 64 * 1024
_PYTHON_NAMES = {"python", "python3", f"python3.{sys.version_info.minor}"}
_OUTPUT_OF: dict[str, dict[str, Any]] = {"text": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
              "jsonl": {"type": "object", "required": ["items"], "properties": {"items": {"type": "array"}}},
              "json": {"type": "object"}}


class ProgramSource:
    """A `Source` whose capabilities are programs declared in sources.yaml."""

    def __init__(self, source_id: str, spec: CommandSource, root: Path) -> None:
        self.id = source_id
        self.kind: SourceKind = "command"
        self.spec = spec
        self.root = Path(root).resolve()
        self._capabilities = {name: self._capability(name, cap) for name, cap in spec.capabilities.items()}

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return self._capabilities

    async def close(self) -> None:
        return None

    # -- contracts -----------------------------------------------------------------------

    def _capability(self, name: str, cap: CommandCapability) -> Capability:
        outcomes = dict(cap.outcomes) or {"0": "ok"}
        ordered = sorted(set(outcomes.values()), key=lambda o: (o != "ok", o))
        return Capability(self.id, name, dict(cap.input) or {"type": "object"},
                          dict(cap.output) or _output_schema(cap.stdout), tuple(ordered),
                          cap.description or "", pins=self._pins(cap))

    def _pins(self, cap: CommandCapability) -> dict[str, str]:
        """The executable as declared, and each file of the project the command line names, by
        content: what the capability does is in those files as much as in its schemas."""
        words = shlex.split(cap.argv[0]) if cap.shell else list(cap.argv)
        pins = {"executable": words[0] if words else ""}
        cwd = self._cwd_of(cap, strict=False)
        for word in words:
            if PLACEHOLDER.search(word) or word.startswith("-"):
                continue
            path = self._project_file(cwd, word)
            if path is not None:
                rel = path.relative_to(self.root).as_posix()
                pins[f"sha256:{rel}"] = _sha256(path)
                # A result cached from this validation depends on the script as on an imported
                # module: an edit of it must miss.
                note_consulted(self.root, [rel])
        return pins

    def _project_file(self, cwd: Path, word: str) -> Path | None:
        try:
            path = (cwd / word).resolve()
            return path if path.is_file() and path.is_relative_to(self.root) else None
        except (OSError, ValueError):
            return None

    # -- calls ---------------------------------------------------------------------------

    def call_here(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        """The same call from a thread without an event loop (a Dask worker's task thread)."""
        async def once() -> CallResult:
            try:
                return await self.call(name, payload, context)
            finally:
                await self.close()
        return asyncio.run(once())

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        cap = self.spec.capabilities.get(name)
        if cap is None:
            raise CapabilityError(f"command source {self.id!r} has no capability {name!r}")
        contract = self._capabilities[name]
        problem = first_error(contract.input_schema, payload)
        if problem is not None:
            raise CapabilityError(f"{contract.ref} input does not match its input schema: {problem}")
        argv = self._argv(name, cap, payload)
        env = {**os.environ, **expand_all(f"command source {self.id!r}", "env", self.spec.env),
               **expand_all(f"{contract.ref}", "env", cap.env), **_context_env(context)}
        timeout = cap.timeout or self.spec.timeout
        code, stdout, stderr = await self._run(contract.ref, argv, env, self._cwd_of(cap), timeout)
        outcome = (dict(cap.outcomes) or {"0": "ok"}).get(str(code))
        if outcome is None:
            raise CapabilityError(mask(f"{contract.ref}: {_program(argv)} exited with status {code}"
                                       f"{_tail(stderr)}"))
        if outcome != "ok" and not stdout.strip():
            return CallResult(outcome, None)  # `exit 3` for "empty" need not print anything
        return CallResult(outcome, masked(self._output(contract.ref, cap, stdout)))

    def _argv(self, name: str, cap: CommandCapability, payload: dict[str, Any]) -> list[str]:
        def fill(word: str, quote: bool) -> str:
            def one(match: re.Match[str]) -> str:
                field = match.group(1)
                if field not in payload:
                    raise CapabilityError(f"{self.id}.{name}: the command line uses {{{field}}}, which the "
                                          "input does not give", hint=f"give `{field}` in the step's `with:`")
                text = _argument(payload[field])
                return shlex.quote(text) if quote else text
            return PLACEHOLDER.sub(one, word)

        if cap.shell:
            return ["/bin/sh", "-c", fill(" ".join(cap.argv), quote=True)]
        argv = [fill(word, quote=False) for word in cap.argv]
        # `python` is the interpreter running wfops: the same packages, with or without a venv.
        if argv[0] in _PYTHON_NAMES:
            argv[0] = sys.executable
        return argv

    def _cwd_of(self, cap: CommandCapability, *, strict: bool = True) -> Path:
        relative = cap.cwd or self.spec.cwd
        cwd = (self.root / relative).resolve() if relative else self.root
        if strict and not cwd.is_dir():
            raise CapabilityError(f"command source {self.id!r}: cwd {relative!r} is not a directory",
                                  hint="`cwd:` is relative to the project root")
        # A symlink out of the project would run the program (and its relative paths) elsewhere.
        if strict and not cwd.is_relative_to(self.root):
            raise CapabilityError(f"command source {self.id!r}: cwd {relative!r} is outside the project",
                                  hint="`cwd:` must be a directory inside the project root")
        return cwd

    async def _run(self, ref: str, argv: list[str], env: dict[str, str], cwd: Path,
                   timeout: float) -> tuple[int, bytes, bytes]:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise CapabilityError(f"{ref}: command not found: {argv[0]!r}",
                                  hint="install it, or give its path relative to the project") from None
        except OSError as exc:
            raise CapabilityError(f"{ref}: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        try:
            stdout, stderr = await asyncio.wait_for(self._collect(ref, process), timeout)
        except TimeoutError:
            _kill_group(process)
            await process.wait()
            raise StepTimeout(f"{ref}: {_program(argv)} did not finish within {timeout:g}s (the "
                              "capability's `timeout:`); its process group was killed") from None
        except BaseException:
            _kill_group(process)  # cancelled (a step timeout) or too much output: nothing left behind
            with contextlib.suppress(Exception):
                await process.wait()
            raise
        # The program is done; a child it left in the background goes with its group.
        _kill_group(process)
        return process.returncode or 0, stdout, stderr

    async def _collect(self, ref: str, process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
        assert process.stdout is not None and process.stderr is not None
        limit = self.spec.max_output_bytes
        out = bytearray()
        err = bytearray()

        async def read_err() -> None:
            assert process.stderr is not None
            while chunk := await process.stderr.read(65536):
                err.extend(chunk)
                del err[:-STDERR_KEEP]

        errors = asyncio.ensure_future(read_err())
        try:
            while chunk := await process.stdout.read(65536):
                out.extend(chunk)
                if len(out) > limit:
                    raise CapabilityError(f"{ref}: stdout is over the limit of {limit:,} bytes (the source's "
                                          "`max_output_bytes:`); the process group was killed",
                                          hint="write large results to a file and print its path")
            await process.wait()
            await errors
        finally:
            errors.cancel()
        return bytes(out), bytes(err)

    def _output(self, ref: str, cap: CommandCapability, stdout: bytes) -> dict[str, Any]:
        text = stdout.decode("utf-8", "replace")
        if cap.stdout == "text":
            return {"text": text}
        try:
            if cap.stdout == "jsonl":
                return {"items": [parse_json(line, f"{ref} stdout line {n}")
                                  for n, line in enumerate(text.splitlines(), 1) if line.strip()]}
            value = parse_json(text, f"{ref} stdout")
        except UsageError as exc:
            raise CapabilityError(mask(exc.message + _excerpt(text)),
                                  hint="the program must print one JSON value (`stdout: json`)"
                                  if cap.stdout == "json" else "each line must be one JSON value") from None
        if not isinstance(value, dict):
            raise CapabilityError(f"{ref} stdout is JSON {type(value).__name__}, not an object",
                                  hint="print a JSON object, e.g. {\"items\": [...]}")
        return value


def _output_schema(mode: str) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(_OUTPUT_OF[mode]))  # a contract is never shared
    return copy


def _argument(value: Any) -> str:
    """An input value as one argument: strings as they are, numbers as written, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _context_env(context: StepContext) -> dict[str, str]:
    """Where the step runs: a program with side effects can deduplicate by the idempotency key,
    which stays the same across the step's retries and a resume."""
    return {"WFOPS_RUN_ID": context.run_id, "WFOPS_STEP": context.step, "WFOPS_ATTEMPT": str(context.attempt),
            "WFOPS_IDEMPOTENCY_KEY": context.idempotency_key}


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _program(argv: list[str]) -> str:
    return f"`{Path(argv[0]).name}`" if argv[0] != "/bin/sh" else "the shell command"


def _tail(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return ("; stderr: " + " | ".join(lines[-STDERR_LINES:])) if lines else ""


def _excerpt(text: str) -> str:
    text = text.strip()
    return f" (stdout began {text[:80]!r})" if text else " (stdout was empty)"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
