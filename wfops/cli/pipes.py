"""Output to a reader that went away (`wfops run d | head -1`) is dropped, never fatal.

A run prints progress and python nodes print while it goes; a closed pipe raising
`BrokenPipeError` out of one of those writes would abandon the run half way, stored as
`running` with nobody driving it. Instead the command keeps going to its end and its exit
code says what it did; only what it would have written to the closed pipe is lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, cast


class DroppingClosedPipe:
    """A text stream that forwards to `inner` until its reader closes the pipe, then drops."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            with self._guard():
                self.inner.write(text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.broken:
            with self._guard():
                self.inner.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding, buffer, ...
        return getattr(self.inner, name)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            self.broken = True
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.EINVAL):  # EINVAL: Windows' closed pipe
                raise
            self.broken = True


@contextlib.contextmanager
def closed_pipes_dropped() -> Iterator[None]:
    """While inside, `sys.stdout` and `sys.stderr` drop output once their reader is gone."""
    saved = sys.stdout, sys.stderr
    out, err = DroppingClosedPipe(saved[0]), DroppingClosedPipe(saved[1])
    sys.stdout, sys.stderr = cast("IO[str]", out), cast("IO[str]", err)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            out.flush()
            err.flush()
        sys.stdout, sys.stderr = saved
        for wrapper in (out, err):
            if wrapper.broken:
                _silence(wrapper.inner)


def _silence(stream: IO[str]) -> None:
    """Point a broken stream's descriptor at /dev/null, so that the interpreter's last flush
    at exit does not print "Exception ignored ... BrokenPipeError" (the Python docs' recipe)."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
