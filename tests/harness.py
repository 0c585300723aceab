"""The one way tests drive the `wfops` command: in process, through its real entry point.

`run_cli(*args, cwd=..., env=..., stdin=...)` calls `wfops.cli.main.main(list(args))` the way
the console script does (the same error boundary, the same exit codes), but in this process:

* the working directory is `cwd` for the call (default: the current one), then restored;
* the environment gets `env` on top (a value of None removes a variable), with the outer CI's
  variables that change what wfops writes (`ISOLATED`) removed unless `env` sets them; the
  whole environment is restored afterwards (wfops itself may `setdefault` variables);
* stdin is `stdin` (empty when None); stdout and stderr are captured; all three are text
  streams over bytes (`.buffer`) that are not terminals (`isatty()` is False), as in a pipe;
* `SystemExit` gives the exit code (returning normally is 0);
* the call starts and ends with no project python module in `sys.modules`, as a fresh
  process would (two temp projects may both have an `ops.py`); `sys.path` and `sys.argv`
  are restored, and no bytecode is written.

A sync node stuck past its step timeout holds only a daemon thread of its own, so a call
returns as a process would exit. Tests where a signal, a crash, or the process itself is
the point use real processes (`WFOPS` with `process_env()`; most are marked `slow`).

`finishes(fn)` is the hang guard for tests whose point is that something does not hang.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")

# Set by CI around the test run; a test that wants one passes it in `env`. (`CI` itself
# refuses `run --unlocked`: a test of the dev loop must see a developer's shell.)
ISOLATED = ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "GITHUB_WORKSPACE", "WFOPS_DB", "CI")

# Code loaded from here is wfops or libraries, never a test project's python source.
_KEEP = tuple(str(p) for p in {Path(sys.prefix), Path(sys.base_prefix), REPO / "wfops", REPO / "tests"})

_lock = threading.Lock()  # one call at a time: a call owns the process-wide streams and cwd


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str
    args: tuple[str, ...] = ()

    @property
    def returncode(self) -> int:
        """The exit code under its `subprocess` name."""
        return self.code

    def json(self) -> Any:
        """stdout as JSON (a `--json` / `--format json` result)."""
        assert self.stdout.strip(), f"no stdout (exit {self.code}); stderr: {self.stderr}"
        return json.loads(self.stdout)


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    # Like a pipe: utf-8 text over bytes, never a terminal, written through at once.
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", errors="replace")


def _apply_env(env: Mapping[str, str | None] | None) -> None:
    for name in ISOLATED:
        os.environ.pop(name, None)
    for name, value in (env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _restore_env(saved: dict[str, str]) -> None:
    for name in [n for n in os.environ if n not in saved]:
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


#: Modules already judged worth keeping, by name: a test process holds thousands, and each
#: command looks only at those loaded since.
_kept: dict[str, object] = {}


def _keeps(path: str) -> bool:
    return path.startswith(_KEEP) or "site-packages" in path


def _forget_project_modules() -> None:
    """Drop every module loaded from outside wfops, the tests and the installed libraries:
    project python sources, which a fresh process would not have (another test's project
    may have a module of the same name)."""
    dropped = False
    for name, module in list(sys.modules.items()):
        if _kept.get(name) is module:
            continue
        origin = getattr(module, "__file__", None)
        if not origin or _keeps(origin) or _keeps(os.path.realpath(origin)):
            _kept[name] = module
            continue
        del sys.modules[name]
        dropped = True
    if dropped:
        importlib.invalidate_caches()


def run_cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str | None] | None = None,
            stdin: str | None = None) -> CliResult:
    """`wfops ARGS` in this process; see the module docstring for what is isolated."""
    from wfops.cli.main import main
    from wfops.redact import forget

    argv = [str(a) for a in args]
    with _lock:
        saved_env = dict(os.environ)
        saved_cwd = os.getcwd()
        saved_path = list(sys.path)
        saved_argv = list(sys.argv)
        saved_bytecode = sys.dont_write_bytecode
        saved_streams = (sys.stdin, sys.stdout, sys.stderr)
        out, err, inp = _stream(), _stream(), _stream((stdin or "").encode("utf-8"))
        code = 0
        try:
            _forget_project_modules()
            forget()  # a command masks the secrets it was told of, not an earlier command's
            _apply_env(env)
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = ["wfops", *argv]
            sys.dont_write_bytecode = True
            sys.stdin, sys.stdout, sys.stderr = inp, out, err
            try:
                main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, int | None):  # as the interpreter reports sys.exit("why")
                    err.write(f"{exc.code}\n")
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            sys.dont_write_bytecode = saved_bytecode
            sys.argv = saved_argv
            sys.path[:] = saved_path
            os.chdir(saved_cwd)
            _restore_env(saved_env)
            _forget_project_modules()
        return CliResult(code, _text(out), _text(err), tuple(argv))


WFOPS = [sys.executable, "-m", "wfops"]  # the command for a real process (with process_env())


def process_env(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment for a real `wfops` process, isolated as `run_cli` isolates a call:
    this checkout's wfops first on the path, `ISOLATED` removed, no bytecode written, then
    `env` applied (None removes a variable)."""
    full = {k: v for k, v in os.environ.items() if k not in ISOLATED}
    full["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    full["PYTHONDONTWRITEBYTECODE"] = "1"
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    return full


def cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str | None] | None = None,
        stdin: str | None = None) -> int:
    """`run_cli`, for tests that read the output with pytest's `capsys`: the captured
    stdout and stderr are written to the current `sys.stdout` / `sys.stderr`; the exit code."""
    done = run_cli(*args, cwd=cwd, env=env, stdin=stdin)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.code


def wait_for(check: Callable[[], T], *, what: str = "condition", timeout: float = 60.0) -> T:
    """Poll `check()` until it returns something truthy, and return that; fail the test after
    `timeout` seconds (a guard against a hang, not a speed bound)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def finishes(fn: Callable[[], T], guard: float = 60) -> T:
    """`fn()`, failing the test if it has not returned within `guard` seconds.

    A hang guard, not a speed bound: for tests whose point is that something does not
    hang (or blow up); how fast it is belongs in bench/. The call runs in a daemon thread,
    so a real hang fails the test instead of stopping the suite.
    """
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    thread = threading.Thread(target=call, daemon=True, name="finishes")
    thread.start()
    thread.join(guard)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} did not finish (hang guard: {guard:g} s)"
    if "error" in box:
        raise box["error"]
    return box["value"]
