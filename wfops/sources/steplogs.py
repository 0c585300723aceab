"""Step logs: what a python node prints (stdout and stderr), the log records it emits, and
its traceback when it fails, kept per attempt of its step.

Nodes of one run overlap (a parallel foreach, threads of sync nodes), so the process-wide
`sys.stdout`/`sys.stderr` are swapped for writers that hand each write to the capture of the
step whose code is writing (a context variable, which follows the node into its thread) and
on to the stream as before: output is still shown live where it went. The swap is counted
like `prints_to_stderr`: the first capture in installs it, the last one out restores.

A finished capture waits, under (run id, step path, attempt), until the runner stores it
next to the step's trace entry (`take`). Each attempt keeps at most `MAX_LOG_CHARS`: the
start and the end, with what was cut in between said in one line. Text is masked by the
process's redactor when stored.

Sources that hear of a step's log from elsewhere (an MCP server's log notifications) add to
it with `note`: under an attempt, under a step whichever attempt of it is stored next
(`ANY_ATTEMPT`: a foreach that owns several calls in flight), or under the run itself
(`RUN_LOG`), kept apart from any step's attempt and stored with the run's next commit.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import IO, Any, cast

from wfops.redact import mask
from wfops.sources.base import StepContext

MAX_LOG_CHARS = 64_000
_HEAD = MAX_LOG_CHARS // 4
#: The line a bounded log carries where its middle was cut (`cut_chars` reads it back).
CUT_MARK = "\n[... {} characters cut ...]\n"
_CUT = re.compile(re.escape(CUT_MARK).replace(r"\{\}", r"(\d+)"))

Key = tuple[str, str, int]  # run id, step path, attempt
#: `note`'s attempt for "the step's attempt that is stored next".
ANY_ATTEMPT = 0
#: `note`'s step for the run's own log (lines no single step is known to have written).
RUN_LOG = ""


class Capture:
    """One attempt's log, bounded: the first `_HEAD` characters, and the newest rest."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_size = 0
        self.tail: list[str] = []
        self.tail_size = 0
        self.cut = 0

    def write(self, text: str) -> None:
        if self.head_size < _HEAD:
            room = _HEAD - self.head_size
            self.head.append(text[:room])
            self.head_size += len(text[:room])
            text = text[room:]
        if text:
            self.tail.append(text)
            self.tail_size += len(text)
            limit = MAX_LOG_CHARS - _HEAD
            while self.tail_size > limit:
                first = self.tail[0]
                over = self.tail_size - limit
                if len(first) <= over:
                    self.tail.pop(0)
                    self.tail_size -= len(first)
                    self.cut += len(first)
                else:
                    self.tail[0] = first[over:]
                    self.tail_size -= over
                    self.cut += over

    def text(self) -> str:
        middle = CUT_MARK.format(self.cut) if self.cut else ""
        return "".join(self.head) + middle + "".join(self.tail)


def cut_chars(text: str) -> int:
    """How many characters the bound cut from the log `text` (0: it is whole)."""
    found = _CUT.search(text)
    return int(found.group(1)) if found else 0


_current: contextvars.ContextVar[capturing | None] = contextvars.ContextVar("wfops_step_log", default=None)
_finished: dict[Key, str] = {}
_notes: dict[Key, Capture] = {}
_lock = threading.Lock()
_users = 0
_saved: tuple[Any, Any] | None = None


class _Teed:
    """A stream that also gives each write to the capture of the step that writes."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        capture = _current.get()
        if capture is not None:
            capture.write(text)
        return self.inner.write(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer, ...
        return getattr(self.inner, name)


class _Records(logging.Handler):
    """Log records of a capturing step go into its log; they still reach stderr as before."""

    def emit(self, record: logging.LogRecord) -> None:
        capture = _current.get()
        if capture is not None:
            capture.write(f"{record.levelname} {record.name}: {record.getMessage()}\n")
            if record.exc_info:
                capture.write("".join(traceback.format_exception(*record.exc_info)))
        root = logging.getLogger()
        last = logging.lastResort
        if len(root.handlers) == 1 and last is not None and record.levelno >= last.level:
            # Only this handler: stderr shows the record as it would without it (written
            # outside the capture, which has it already).
            token = _current.set(None)
            try:
                last.handle(record)
            finally:
                _current.reset(token)


_handler = _Records()


def _install() -> None:
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = (sys.stdout, sys.stderr)
            sys.stdout = cast("IO[str]", _Teed(sys.stdout))
            sys.stderr = cast("IO[str]", _Teed(sys.stderr))
            logging.getLogger().addHandler(_handler)
        _users += 1


def _uninstall() -> None:
    global _users, _saved
    with _lock:
        _users -= 1
        if _users == 0 and _saved is not None:
            sys.stdout, sys.stderr = _saved
            _saved = None
            logging.getLogger().removeHandler(_handler)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """The capture's stream wrappers and log handler kept in place while inside (a fan-out's
    many calls): each `capturing` inside then only counts itself in and out."""
    _install()
    try:
        yield
    finally:
        _uninstall()


class capturing:  # noqa: N801 - used as the context manager it replaces, `with capturing(context):`
    """Capture the log of one attempt of a step while inside; a failure's traceback ends it.

    `installed=True`: the caller holds `installed()` around this capture (a fan-out's calls),
    so the capture only sets its context variable, without counting itself in and out. A
    class, not a generator: it runs around every call of a fan-out's items. Its `Capture` is
    made at the first write (most nodes write nothing)."""

    __slots__ = ("capture", "context", "counted", "token")

    def __init__(self, context: StepContext, *, installed: bool = False) -> None:
        self.context = context
        self.counted = not installed
        self.capture: Capture | None = None

    def write(self, text: str) -> None:
        capture = self.capture
        if capture is None:
            capture = self.capture = Capture()
        capture.write(text)

    def __enter__(self) -> None:
        if self.counted:
            _install()
        self.token = _current.set(self)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc is not None:
            self.write("".join(traceback.format_exception(kind, exc, tb)))
        _current.reset(self.token)
        if self.counted:
            _uninstall()
        capture = self.capture
        if capture is not None and capture.head_size:  # the head fills first: empty head, nothing written
            context = self.context
            text = capture.text()
            with _lock:
                _finished[(context.run_id, context.step, context.attempt)] = text


def note(run_id: str, step: str, attempt: int, text: str) -> None:
    """Add `text` to the log of that attempt of a step (`ANY_ATTEMPT`: its next stored one), or
    to the run's own log (step `RUN_LOG`), bounded as a capture is."""
    with _lock:
        capture = _notes.get((run_id, step, attempt))
        if capture is None:
            capture = _notes[(run_id, step, attempt)] = Capture()
        capture.write(text)


def waiting() -> bool:
    """Whether any log waits to be taken, of any run: asked before every commit (most runs log
    nothing). Read without the lock: a capture finishes before its call returns, and a note
    that lands just after the answer waits for the next commit, as it would after a `take`."""
    return bool(_finished) or bool(_notes)


def take(run_id: str, step: str, attempt: int) -> str | None:
    """The masked log of that attempt (once: it is then forgotten), or None when it wrote nothing."""
    if not waiting():
        # Asked for every committed entry, and most nodes print nothing. No lock needed: an
        # attempt's log is kept when its capture ends, before its entry can be committed.
        return None
    with _lock:
        parts = [_finished.pop((run_id, step, attempt), None)]
        if _notes:  # asked for every committed entry: most runs note nothing
            parts += [c.text() for c in (_notes.pop((run_id, step, attempt), None),
                                         _notes.pop((run_id, step, ANY_ATTEMPT), None)) if c is not None]
    return _stored([part for part in parts if part])


def take_run(run_id: str, *, ended: bool = False) -> str | None:
    """The masked run's own log (once), or None. When the run has `ended` (nothing of it is
    committed any more), what was noted for steps that stored no entry comes with it, each
    line saying its step: never dropped."""
    with _lock:
        if ended:
            for key in [key for key in _notes if key[0] == run_id and key[1] != RUN_LOG]:
                label = key[1] + (f" attempt {key[2]}" if key[2] != ANY_ATTEMPT else "")
                orphan = "".join(f"[for {label}, which stored no entry] {line}"
                                 for line in _notes.pop(key).text().splitlines(keepends=True))
                _notes.setdefault((run_id, RUN_LOG, ANY_ATTEMPT), Capture()).write(orphan)
        found = _notes.pop((run_id, RUN_LOG, ANY_ATTEMPT), None)
    return _stored([found.text()]) if found is not None else None


def _stored(parts: list[str]) -> str | None:
    if not parts:
        return None
    if len(parts) > 1:  # one attempt heard of from two places: one bound for all of it
        joined = Capture()
        for part in parts:
            joined.write(part)
        parts = [joined.text()]
    return storable(mask(parts[0]))


def storable(text: str) -> str:
    """Text every store backend takes: a lone surrogate (bytes a node decoded with
    `surrogateescape`) becomes its escape, and NUL, which PostgreSQL text refuses, `\\x00`."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")

