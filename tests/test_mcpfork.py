"""The suite's MCP fork server (tests/mcpfork.py): a script started under a zygote's directory
runs as a forked child with the argv, environment, cwd, stdio, umask and signal dispositions it
was started with, and its parent sees the exit code or signal it would have seen; with no
zygote, a dead one or a refusal, the script runs by itself. Real processes, a real zygote of
the test's own (deeper than the session's, so it is the one the scripts find)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import mcpfork
from tests.harness import wait_for
from tests.mcp.helpers import STATEFUL, alive, wait_dead

pytestmark = pytest.mark.slow  # starts a zygote and real processes

# The probe: a script that reports what it is (and whether the SDK was loaded before its first
# line ran, i.e. it is a child of the zygote), then does what its first argument says.
PROBE = mcpfork.preamble() + '''
import json, os, signal, sys, time
PRELOADED = "mcp" in sys.modules

def streams():
    return [[s.encoding, s.errors, s.line_buffering, s.write_through, type(s.buffer).__name__, s.mode,
             s.buffer.raw.name if hasattr(s.buffer, "raw") else s.buffer.name] for s in (sys.stdin, sys.stdout, sys.stderr)]

def report():
    umask = os.umask(0)
    os.umask(umask)
    return {"argv": sys.argv, "orig_argv": sys.orig_argv, "cwd": os.getcwd(), "env": dict(os.environ),
            "path": sys.path, "file": __file__, "name": __name__, "spec": repr(__spec__),
            "loader": type(__loader__).__name__, "executable": sys.executable, "flags": list(sys.flags),
            "dont_write_bytecode": sys.dont_write_bytecode, "umask": umask, "streams": streams(),
            "signals": {n: repr(signal.getsignal(n)) for n in range(1, signal.NSIG) if n not in (9, 19)
                        and signal.getsignal(n) is not None},
            "cmdline": open("/proc/self/cmdline", "rb").read().rstrip(b"\\0").decode(),
            # How long the child's watcher waits for its stub to end: forever, not the handshake's timeout.
            "watch": [t._args[0].gettimeout() for t in __import__("threading").enumerate() if t.name == "mcpfork-watch"],
            "pid": os.getpid(), "ppid": os.getppid(), "preloaded": PRELOADED}

mode = sys.argv[1]
if mode == "report":
    line = sys.stdin.readline()
    print(json.dumps(report()))
    print(f"echo {line.strip()}")
    sys.stderr.write("to stderr\\n")
elif mode == "exit":
    print("leaving", flush=True)
    sys.exit(int(sys.argv[2]))
elif mode == "message":
    sys.exit("a message for stderr")
elif mode == "raise":
    raise ValueError("boom")
elif mode == "interrupt":
    raise KeyboardInterrupt
elif mode == "kill":
    os.kill(os.getpid(), int(sys.argv[2]))
elif mode == "atexit":
    import atexit, threading
    atexit.register(lambda: print("atexit ran", flush=True))
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread done", flush=True))).start()
elif mode == "close":
    print("bye", flush=True)
    os.close(1)
    sys.stdin.read()
elif mode == "wait":
    def stop(signum, frame):
        print(f"got {signum}", flush=True)
        sys.exit(7)
    signal.signal(signal.SIGTERM, stop)
    open(sys.argv[2], "w").write(str(os.getpid()))
    while True:
        time.sleep(3600)
'''


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A zygote of this module's own, in a directory whose socket path is too long to bind
    directly (it is reached through the directory's fd); its pid."""
    folder = tmp_path_factory.mktemp("zygote") / ("z" * 100)
    folder.mkdir()
    started = mcpfork.start(folder)
    wait_for(lambda: (folder / mcpfork.SOCKET_NAME).exists(), what="the zygote's socket")
    yield folder, started[0].pid  # type: ignore[index]
    mcpfork.stop(started)


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("probe") / "probe.py"
    path.write_text(PROBE, encoding="utf-8")
    return path


@pytest.fixture
def under(zygote: tuple[Path, int], tmp_path: Path) -> Path:
    """A fresh directory under the zygote (where a test project would be)."""
    folder = Path(tempfile.mkdtemp(dir=zygote[0]))
    (folder / "p").mkdir()
    return folder / "p"


@pytest.fixture
def alone() -> Iterator[Path]:
    """A directory under no zygote at all (outside the session's basetemp)."""
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


# As an MCP client starts a server: a few safe variables and the declared ones, nothing of the
# test's (whose PYTHONPATH would make the zygote refuse: its sys.path would differ).
ENV = {**mcpfork.server_env(), "PROBE_VALUE": "a b\nc"}


def run(probe: Path, cwd: Path, *args: str, flags: tuple[str, ...] = (), **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, str(probe), *args], cwd=cwd, env=ENV, text=True,  # type: ignore[call-overload]
                          capture_output=True, timeout=120, **kw)


def reported(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    return json.loads(done.stdout.splitlines()[0])


@pytest.mark.parametrize("flags", [(), ("-u",)])
def test_the_child_is_the_process_it_was_started_as(probe: Path, under: Path, alone: Path, zygote: tuple[Path, int],
                                                     flags: tuple[str, ...]) -> None:
    umask = os.umask(0o027)
    try:
        forked = run(probe, under, "report", "x y", flags=flags, input="hello\n")
        plain = run(probe, alone, "report", "x y", flags=flags, input="hello\n")
    finally:
        os.umask(umask)
    assert forked.returncode == plain.returncode == 0, forked.stderr + plain.stderr
    assert forked.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:] == ["echo hello"]
    assert forked.stderr == plain.stderr == "to stderr\n"
    mine, theirs = reported(forked), reported(plain)
    # The fast path was taken: the SDK was loaded before the script's first line, by the zygote.
    assert mine["preloaded"] is True and mine["ppid"] == zygote[1]
    assert theirs["preloaded"] is False and theirs["ppid"] != zygote[1]
    assert mine["cwd"] == str(under) and mine["env"]["PROBE_VALUE"] == "a b\nc"  # type: ignore[index]
    assert mine["umask"] == 0o027
    assert (mine["watch"], theirs["watch"]) == ([None], [])
    for key in ("pid", "ppid", "preloaded", "cwd", "watch"):
        del mine[key], theirs[key]
    assert mine == theirs  # argv, environment, sys.path, stdio, signal dispositions, flags, ps...


@pytest.mark.parametrize("args", [("exit", "0"), ("exit", "3"), ("exit", "300"), ("message",), ("raise",),
                                  ("interrupt",), ("kill", str(int(signal.SIGTERM))), ("kill", str(int(signal.SIGKILL))),
                                  ("atexit",)])
def test_the_parent_sees_the_same_end(probe: Path, under: Path, alone: Path, args: tuple[str, ...]) -> None:
    forked, plain = run(probe, under, *args), run(probe, alone, *args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def start_waiting(probe: Path, under: Path) -> tuple[subprocess.Popen[str], int]:
    pid_file = under / "pid"
    stub = subprocess.Popen([sys.executable, str(probe), "wait", str(pid_file)], cwd=under, text=True,
                            env=ENV, stdout=subprocess.PIPE, start_new_session=True)
    server = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the server's pid"))
    assert server != stub.pid and alive(server)
    return stub, server


def test_a_signal_to_the_stub_reaches_the_server(probe: Path, under: Path) -> None:
    stub, server = start_waiting(probe, under)
    stub.send_signal(signal.SIGTERM)
    out, _ = stub.communicate(timeout=60)
    assert (stub.returncode, out) == (7, f"got {int(signal.SIGTERM)}\n")
    assert wait_dead(server)


@pytest.mark.parametrize("how", ["kill", "killpg"])
def test_the_server_dies_with_its_stub(probe: Path, under: Path, how: str) -> None:
    stub, server = start_waiting(probe, under)
    if how == "kill":
        stub.kill()
    else:
        os.killpg(stub.pid, signal.SIGKILL)  # the stub's session, which the server is not in
    stub.wait()
    assert wait_dead(server), "the server outlived its stub"


def test_a_stdio_mcp_server_serves_and_ends_at_stdin_eof(under: Path) -> None:
    pid_file = under / "server.pid"
    server = subprocess.Popen([sys.executable, STATEFUL, "--pid-file", str(pid_file)], cwd=under, env=ENV,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).encode() + b"\n")
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    assert answer["result"]["serverInfo"]["name"] == "wfops-test-stateful"
    server.stdin.close()
    assert server.wait(60) == 0
    assert int(pid_file.read_text()) != server.pid  # the server was the stub's forked child


def test_a_pipe_the_server_closes_ends_for_its_parent(probe: Path, under: Path) -> None:
    server = subprocess.Popen([sys.executable, str(probe), "close"], cwd=under, env=ENV, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(server.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(60)  # a hang guard: the stub holds no copy of the server's stdout
    assert out == ["bye\n"] and server.poll() is None
    server.stdin.close()
    assert server.wait(60) == 0


def test_a_refused_or_dead_zygote_leaves_the_script_to_itself(probe: Path, tmp_path: Path, under: Path) -> None:
    # A socket nobody listens on any more (a zygote that died).
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / mcpfork.SOCKET_NAME))
    stale.close()
    (tmp_path / "p").mkdir()
    done = run(probe, tmp_path / "p", "report", input="hi\n")
    assert done.returncode == 0 and reported(done)["preloaded"] is False
    # An interpreter unlike the zygote's (-O): the zygote refuses, the script runs by itself.
    done = run(probe, under, "report", flags=("-O",), input="hi\n")
    assert done.returncode == 0 and reported(done)["preloaded"] is False
    assert done.stdout.splitlines()[1:] == ["echo hi"]
    # A script whose directory holds a module the zygote loaded (and the script would import
    # its own copy of): the zygote refuses.
    (shadow := under / "shadow").mkdir()
    (shadow / "probe.py").write_text(probe.read_text())
    (shadow / "anyio.py").write_text("")
    done = run(shadow / "probe.py", under, "report", input="hi\n")
    assert done.returncode == 0 and reported(done)["preloaded"] is False


def test_a_server_outlives_its_zygote_and_still_reports_its_exit(probe: Path, tmp_path: Path) -> None:
    started = mcpfork.start(tmp_path)
    zygote = started[0]  # type: ignore[index]
    try:
        wait_for(lambda: (tmp_path / mcpfork.SOCKET_NAME).exists(), what="the zygote's socket")
        (tmp_path / "p").mkdir()
        stub, server = start_waiting(probe, tmp_path / "p")
        zygote.kill()
        zygote.wait()
        assert alive(server)
        stub.send_signal(signal.SIGTERM)
        out, _ = stub.communicate(timeout=60)
        # No zygote to report the wait status: the child's own word for its exit code.
        assert (stub.returncode, out) == (7, f"got {int(signal.SIGTERM)}\n")
        assert wait_dead(server)
    finally:
        mcpfork.stop(started)
