"""The test suite's fork server for its MCP test servers (the "zygote").

`import mcp` costs over a second of CPU, and the suite starts a hundred test servers. So the
session starts one process that imports the SDK once and forks a child for each server start;
the child runs the server script with the argv, environment, cwd, stdio fds, umask and signal
dispositions of the process wfops started, which stays alive as a stub: it forwards signals to
the child and ends as the child ended (the same exit code, or death by the same signal).

Three parts, one file, since a server script started by a bare interpreter (no PYTHONPATH)
loads it by its path, before anything imports mcp, and it imports only light stdlib modules:
- `fork_here()`, the stub, run first by each test server script (loaded as `mcpfork.stub`,
  see `preamble()`). It finds the session's zygote by walking up from its cwd to a
  `mcpfork.sock` (every test project lives under the session's basetemp, where the zygote
  listens); with none, a refusal (another interpreter, locale or sys.path) or any error
  before the child is told to go, it returns and the script runs by itself.
- `serve(path, lifeline)`, the zygote: `python tests/mcpfork.py SOCKET FD PADDING`. Each
  child watches its stub's connection and dies at once when the stub is gone (a SIGKILL, or
  a killpg of the stub's group, which the child is not in).
- `start(basetemp)` and `stop(...)`, for tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Iterator

SOCKET_NAME = "mcpfork.sock"
# Signals the stub passes on to the child: every one a parent may use to stop or poke a server.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
# What the test servers import beyond `mcp` itself (measured: stdio `app.run()` and argparse).
PRELOAD = ("mcp", "mcp.server.mcpserver", "mcp.server.mcpserver.exceptions", "mcp.server.stdio",
           "mcp.types", "anyio", "anyio._backends._asyncio", "pydantic", "argparse", "rich.logging")
# A zygote that accepted but does not answer must not hang a server: it then runs by itself.
HANDSHAKE_TIMEOUT = 10.0
# The sys.flags that may differ: set in the child (the rest must agree, or no fork).
SETTABLE_FLAGS = ("dont_write_bytecode",)


# --- the stub --------------------------------------------------------------------------------

def fork_here() -> None:
    """Run this server script as a child of the session's zygote and exit as it exits; return
    (the script then runs by itself) when there is no zygote or it did not take the job."""
    if "mcp" in sys.modules:
        return  # nothing to gain: the SDK is loaded (this is a child of the zygote already)
    path = _find_socket()
    if path is None:
        return
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous: dict[int, object] = {}
    try:
        conn.settimeout(HANDSHAKE_TIMEOUT)
        with _reachable(path) as address:
            conn.connect(address)
        header = json.dumps(_describe()).encode()
        socket.send_fds(conn, [struct.pack("!I", len(header))], [0, 1, 2])
        conn.sendall(header)
        reader = conn.makefile("rb")
        answer = reader.readline().split()
        if len(answer) != 2 or answer[0] != b"pid":
            raise ValueError(answer)
        pid = int(answer[1])
        for signum in FORWARDED:
            previous[signum] = signal.signal(signum, lambda signum, _frame: _forward(pid, signum))
        conn.sendall(b"go")
    except (OSError, ValueError):
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        conn.close()
        return
    # From here on the child is the server: the stub never runs the script itself. It lets go
    # of the pipes, so that they end (EOF, EPIPE) when the child closes them, as a server's do.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    conn.settimeout(None)
    _exit_as(_outcome(reader))


def _find_socket() -> str | None:
    try:
        here = os.getcwd()
    except OSError:
        return None
    while True:
        candidate = os.path.join(here, SOCKET_NAME)
        if os.path.exists(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


@contextlib.contextmanager
def _reachable(path: str) -> Iterator[str]:
    """`path` as a socket address: a UNIX socket's path is at most 107 bytes, so a longer one
    is reached through its directory's descriptor."""
    if len(os.fsencode(path)) < 100:
        yield path
        return
    folder = os.open(os.path.dirname(path), os.O_PATH)
    try:
        yield f"/proc/self/fd/{folder}/{SOCKET_NAME}"
    finally:
        os.close(folder)


def _describe() -> dict[str, object]:
    """What the child needs to be this process: it is the same interpreter with the same
    environment, so its sys.path, stdio and signal dispositions are the script's own."""
    umask = os.umask(0)
    os.umask(umask)
    return {
        "interpreter": _interpreter(),
        "argv": sys.argv, "orig_argv": sys.orig_argv, "path": sys.path, "executable": sys.executable,
        "script": os.path.abspath(sys.argv[0]), "cwd": os.getcwd(), "environ": dict(os.environ),
        "umask": umask, "flags": {name: getattr(sys.flags, name) for name in SETTABLE_FLAGS},
        "signals": _dispositions(), "modules": sorted({name.partition(".")[0] for name in sys.modules}),
        "stdio": [_stream(stream) for stream in (sys.stdin, sys.stdout, sys.stderr)],
    }


def _interpreter() -> list[object]:
    """What must agree between the stub and the zygote for the child to be this interpreter
    (and its sys.path, less the script's directory: the preloaded modules came from there)."""
    flags = [value for name, value in zip(sys.flags.__match_args__, sys.flags, strict=True)
             if name not in SETTABLE_FLAGS]
    return [os.path.realpath(sys.executable), sys.version, sys.prefix, sys.base_prefix, flags,
            sys.getfilesystemencoding(), sys.getfilesystemencodeerrors(), sys.warnoptions,
            sorted(map(str, sys._xoptions.items()))]


def _dispositions() -> dict[str, str]:
    found = {}
    for signum in range(1, signal.NSIG):
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        if handler is signal.SIG_IGN:
            found[str(signum)] = "ignore"
        elif handler is signal.default_int_handler:
            found[str(signum)] = "interrupt"
    return found


def _stream(stream: object) -> dict[str, object]:
    buffer = getattr(stream, "buffer", None)
    if not isinstance(stream, io.TextIOWrapper) or buffer is None:
        raise ValueError("stdio is not Python's own")
    return {"encoding": stream.encoding, "errors": stream.errors, "line_buffering": stream.line_buffering,
            "write_through": stream.write_through, "buffered": not isinstance(buffer, io.FileIO)}


def _forward(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def _outcome(reader: object) -> str:
    """The child's end: the zygote's wait status if it reported one, else what the child said
    of itself (the zygote died first); EOF comes once both have closed the connection."""
    reported: dict[bytes, bytes] = {}
    for line in reader:  # type: ignore[attr-defined]
        key, _, value = line.strip().partition(b" ")
        reported[key] = value
    if b"status" in reported:
        status = int(reported[b"status"])
        if os.WIFSIGNALED(status):
            return f"signal {os.WTERMSIG(status)}"
        return f"exit {os.waitstatus_to_exitcode(status)}"
    return f"exit {int(reported.get(b'exit', b'1'))}"


def _exit_as(outcome: str) -> None:
    kind, value = outcome.split()
    code = int(value)
    if kind == "signal":
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [code])
        os.kill(os.getpid(), code)
        code = 128 + code  # a signal whose default is not to die
    os._exit(code)


# --- the zygote --------------------------------------------------------------------------------

def serve(path: str, lifeline: int) -> None:
    """Import the SDK, listen at `path`, fork a child for each stub, report each child's end;
    leave when `lifeline` (a pipe the session holds the other end of) reads EOF."""
    import gc  # deferred: the zygote's own modules stay off the stub's path
    import importlib
    import selectors
    import threading

    del sys.path[0]  # tests/, whose `mcp/` package would shadow the SDK
    importlib.import_module("mcp")
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # an older SDK: its servers import the rest themselves
            importlib.import_module(name)
    gc.collect()
    gc.freeze()  # the children share these pages; the collector would copy them
    interpreter = json.loads(json.dumps(_interpreter()))  # as a stub's header carries it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with _reachable(path) as address:
        listener.bind(address)
    listener.listen(128)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(lifeline, selectors.EVENT_READ)
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    while True:
        for key, _events in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                assert threading.active_count() == 1, "the zygote forks single-threaded"
                started = _spawn(conn, interpreter, [listener, selector, *(c for _, c in children.values())],
                                 [lifeline, *children])
                if started is not None:
                    pid, pidfd = started
                    children[pidfd] = (pid, conn)
                    selector.register(pidfd, selectors.EVENT_READ)
                continue
            if key.fd == lifeline:
                os.unlink(path)
                return  # the session is over (or killed): the running servers live on
            pidfd = key.fd
            selector.unregister(pidfd)
            pid, conn = children.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            os.close(pidfd)
            with contextlib.suppress(OSError):  # the stub is gone: nobody to tell
                conn.sendall(b"status %d\n" % status)
            conn.close()


def _spawn(conn: socket.socket, interpreter: list[object], closing: list[object],
           pidfds: list[int]) -> tuple[int, int] | None:
    """Fork the child for the stub on `conn`: (its pid, a pidfd that reads ready when it ends),
    or None when the stub's request is refused or broken (the stub then runs the script)."""
    fds: list[int] = []
    try:
        conn.settimeout(HANDSHAKE_TIMEOUT)
        data, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
        if len(data) != 4 or len(fds) != 3:
            raise ValueError("expected a length and three fds")
        (size,) = struct.unpack("!I", data)
        header = b""
        while len(header) < size:
            chunk = conn.recv(size - len(header))
            if not chunk:
                raise ValueError("short header")
            header += chunk
        spec = json.loads(header)
        if interpreter != spec["interpreter"] or spec["path"][1:] != sys.path:
            raise ValueError("not the zygote's interpreter")
        if _shadowed(os.path.join(spec["cwd"], spec["path"][0]), spec["modules"]):
            raise ValueError("the script's directory shadows a preloaded module")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                for thing in closing:
                    thing.close()  # type: ignore[attr-defined]
                for pidfd in pidfds:
                    os.close(pidfd)
                _child(conn, fds, spec)
            except BaseException:
                import traceback  # deferred: a broken child only

                traceback.print_exc()
            finally:
                os._exit(70)  # not reached: _child ends the process
        pidfd = os.pidfd_open(pid)
        conn.settimeout(None)
        conn.sendall(b"pid %d\n" % pid)
        return pid, pidfd
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        with contextlib.suppress(OSError):
            conn.sendall(b"no %s\n" % str(error).encode()[:200])
        conn.close()
        return None
    finally:
        for fd in fds:
            os.close(fd)


def _shadowed(folder: str, stub_loaded: list[str]) -> bool:
    """Whether the script's directory (first on its sys.path) holds a module the zygote has
    loaded and the stub has not: the script would import that one, the child has the zygote's."""
    import importlib.machinery  # deferred: loaded by the preload

    try:
        entries = os.listdir(folder)
    except OSError:
        return True
    loaded = {name.partition(".")[0] for name in sys.modules} - set(stub_loaded)
    suffixes = tuple(importlib.machinery.all_suffixes())
    return any(entry.partition(".")[0] in loaded
               and (entry.endswith(suffixes) or os.path.isdir(os.path.join(folder, entry)))
               for entry in entries)


# --- the child ---------------------------------------------------------------------------------

def _child(conn: socket.socket, fds: list[int], spec: dict[str, object]) -> None:
    """Become the server the stub would have been, run its script, exit as Python would."""
    import threading  # deferred: loaded by the zygote's preload

    # The handshake's timeout was set before the fork: without this the watcher's wait for the
    # stub's end would time out, and kill the server, after that many seconds.
    conn.settimeout(None)
    if conn.recv(2) != b"go":
        os._exit(0)  # the stub gave up before the start: touch nothing of its
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    fds.clear()
    os.chdir(spec["cwd"])  # type: ignore[arg-type]
    os.environ.clear()
    os.environ.update(spec["environ"])  # type: ignore[arg-type]
    os.umask(spec["umask"])  # type: ignore[arg-type]
    _signals(spec["signals"])  # type: ignore[arg-type]
    _retitle(spec["orig_argv"])  # type: ignore[arg-type]
    sys.argv = list(spec["argv"])  # type: ignore[call-overload]
    sys.orig_argv = list(spec["orig_argv"])  # type: ignore[call-overload]
    sys.path[:] = spec["path"]  # type: ignore[index]
    sys.executable = spec["executable"]  # type: ignore[assignment]
    sys.dont_write_bytecode = bool(spec["flags"]["dont_write_bytecode"])  # type: ignore[index]
    _stdio(spec["stdio"])  # type: ignore[arg-type]
    # The stub holds the other end: when it dies (SIGKILL, a killpg of its group, which this
    # process is not in), the server goes at once, as it would have died with it.
    threading.Thread(target=_watch, args=(conn,), name="mcpfork-watch", daemon=True).start()
    code = _run(spec["script"])  # type: ignore[arg-type]
    _finish(conn, code)


def _retitle(argv: list[str]) -> None:
    """Show the stub's command line in /proc/PID/cmdline (ps, and the tests that look for a
    server by its argv), written over the zygote's, which `start` padded to leave room."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (proc(5): fields 48, 49)
        data = b"\0".join(map(os.fsencode, argv)) + b"\0"
        if len(data) <= end - start:
            with open("/proc/self/mem", "r+b", buffering=0) as memory:
                memory.seek(start)
                memory.write(data.ljust(end - start, b"\0"))


def _signals(dispositions: dict[str, str]) -> None:
    for signum in range(1, signal.NSIG):
        handler = {"ignore": signal.SIG_IGN, "interrupt": signal.default_int_handler}.get(
            dispositions.get(str(signum), ""), signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP: not to be touched
            signal.signal(signum, handler)


def _stdio(specs: list[dict[str, object]]) -> None:
    """Streams like the ones the interpreter makes at start-up, on the stub's fds 0, 1, 2."""
    streams = []
    for fd, (spec, name) in enumerate(zip(specs, ("<stdin>", "<stdout>", "<stderr>"), strict=True)):
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        buffer: io.RawIOBase | io.BufferedIOBase = raw
        if fd == 0:
            buffer = io.BufferedReader(raw)
        elif spec["buffered"]:
            buffer = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buffer, spec["encoding"], spec["errors"], "\n",  # type: ignore[arg-type]
                                  bool(spec["line_buffering"]), bool(spec["write_through"]))
        raw.name = name  # type: ignore[misc]
        stream.mode = "r" if fd == 0 else "w"  # type: ignore[misc]
        streams.append(stream)
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def _watch(conn: socket.socket) -> None:
    try:
        while conn.recv(64):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def _run(script: str) -> int:
    """Run `script` as `__main__`, as `python script` does; its exit code."""
    import builtins  # deferred: loaded by the zygote's preload
    import importlib.machinery
    import types

    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__cached__ = None  # type: ignore[attr-defined]
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
    main.__spec__ = None
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as source:
            code = compile(source.read(), script, "exec", dont_inherit=True)
        exec(code, main.__dict__)
    except SystemExit as stop:
        return _exit_code(stop)
    except BaseException as error:  # noqa: BLE001 - the interpreter's top level, mirrored
        tb = error.__traceback__
        if tb is not None and tb.tb_frame.f_globals is not main.__dict__:
            # This frame: the traceback starts at the script, as Python's does.
            error.__traceback__ = tb = tb.tb_next
        sys.excepthook(type(error), error, tb)
        if isinstance(error, KeyboardInterrupt):
            _flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)  # Python dies of SIGINT on an uncaught ^C
        return 1
    return 0


def _exit_code(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code & 0xFF
    sys.stderr.write(f"{stop.code}\n")
    return 1


def _finish(conn: socket.socket, code: int) -> None:
    """Python's exit: wait for the non-daemon threads, run the atexit functions, flush stdio."""
    import atexit  # deferred: loaded by the zygote's preload
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    if not _flush() and code == 0:
        code = 120  # as Python exits when stdout cannot be flushed
    with contextlib.suppress(OSError):  # heard only if the zygote is gone before its report
        conn.sendall(b"exit %d\n" % code)
    os._exit(code)


def _flush() -> bool:
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


# --- the session's side ------------------------------------------------------------------------

def preamble() -> str:
    """The first lines of a test server that a test writes into its project: the fork, as the
    suite's own server scripts do it by a path relative to themselves."""
    return ("import importlib.util as _fork\n"
            f"_spec = _fork.spec_from_file_location('mcpfork.stub', {os.path.abspath(__file__)!r})\n"
            "_spec.loader.exec_module(_fork.module_from_spec(_spec))\n")


def server_env() -> dict[str, str]:
    """The environment an MCP client gives a stdio server (the SDK's safe defaults), which the
    zygote has too: a server started with another (a locale, PYTHONPATH) runs by itself, since
    its interpreter would not be the zygote's (UTF-8 mode, sys.path)."""
    return {key: os.environ[key] for key in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER") if key in os.environ}


def start(basetemp: os.PathLike[str] | str) -> object:
    """Start the zygote listening in `basetemp`; it binds once its imports are done, and the
    servers started before that run by themselves."""
    import subprocess  # deferred: the session's side only

    path = os.path.join(os.fspath(basetemp), SOCKET_NAME)
    # The SDK's modules are imported under the same conditions as in a real server.
    env = server_env()
    log = open(os.path.join(os.fspath(basetemp), "mcpfork.log"), "wb")  # noqa: SIM115 - the zygote's
    lifeline, held = os.pipe()
    try:
        zygote = subprocess.Popen([sys.executable, os.path.abspath(__file__), path, str(lifeline), "-" * 8192], env=env,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/", pass_fds=[lifeline])
    finally:
        log.close()
        os.close(lifeline)
    return zygote, held


def stop(started: object) -> None:
    """Close the zygote's lifeline and wait for it: it stops listening; servers still running
    end with their stubs."""
    import subprocess  # deferred: the session's side only

    zygote, held = started  # type: ignore[misc]
    assert isinstance(zygote, subprocess.Popen)
    os.close(held)
    try:
        zygote.wait(30)
    except subprocess.TimeoutExpired:
        zygote.kill()
        zygote.wait()
    path = zygote.args[2]
    if os.path.exists(path):
        os.unlink(path)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
elif __name__ == "mcpfork.stub":
    fork_here()
