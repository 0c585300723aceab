"""Never hang on a sync python node that outlived its step timeout.

Such a node keeps running in a worker thread of the event loop's default executor (a
thread cannot be cancelled). `asyncio.run` would wait for that thread before returning,
and the interpreter joins it again at exit: a hung node would hang `wfops run` long
after its step failed with `Timeout` and the run was committed. `run_coroutine` returns
without waiting, and `exit_if_abandoned` leaves the process without joining.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Coroutine
from typing import Any

_WORKER_PREFIX = "asyncio_"  # the loop's default executor names its threads asyncio_0, asyncio_1, ...


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """`asyncio.run(coro)` (same Ctrl-C handling), minus the wait for busy worker threads."""
    runner = asyncio.Runner()
    try:
        return runner.run(coro)
    finally:
        loop = runner.get_loop()
        executor = getattr(loop, "_default_executor", None)
        if executor is not None:
            loop._default_executor = None  # so close() does not wait for it
            executor.shutdown(wait=False, cancel_futures=True)
        runner.close()


def abandoned_workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t.is_alive() and not t.daemon and t.name.startswith(_WORKER_PREFIX)]


def exit_if_abandoned(code: int) -> None:
    """Exit now with `code` when a timed-out node still holds a worker thread (else return)."""
    if not abandoned_workers():
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
