"""What stops a driven run early: a cancel request in the store (`wfops cancel` from any
process) or Ctrl-C in the driving process. The engine polls `requested` while it drives.
An error that stops a stored run is made to name it (`name_stored`)."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from wfops.errors import RunBusyError, RunStopped, StoreError, WfopsError
from wfops.store.protocol import Store


class StopSignal:
    """The engine's `CancelSignal` for runs driven against a store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.interrupted = False  # Ctrl-C (SIGINT) reached this process

    def requested(self, run_id: str) -> bool:
        if self.interrupted:
            return True
        try:
            return self.store.cancel_requested(run_id)
        except StoreError:
            return False  # a store busy for a moment: look again at the next poll

    @contextmanager
    def on_sigint(self) -> Iterator[None]:
        """While driving on the main thread: the first Ctrl-C cancels the run cleanly (it is
        recorded `cancelled`); a second one stops the process at once."""
        loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def first() -> None:
            if self.interrupted:
                raise KeyboardInterrupt
            self.interrupted = True

        try:
            loop.add_signal_handler(signal.SIGINT, first)
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here (e.g. not a unix loop)
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)


def name_stored(exc: WfopsError, run_id: str) -> None:
    """Make an error raised after run `run_id` was stored name it: `exc.run_id` is set, and an
    error that leaves the run resumable (a store problem, a stopped run) says in its message
    which run and in its hint how to resume it. Another process driving the run (RunBusyError)
    leaves it alone: there is nothing for this caller to resume."""
    if exc.run_id is None:
        exc.run_id = run_id
    if isinstance(exc, RunBusyError) or not isinstance(exc, StoreError | RunStopped):
        return
    if run_id not in exc.message:
        exc.message = f"run {run_id}: {exc.message}"
        exc.args = (exc.message,)
    if exc.hint is not None and run_id in exc.hint:
        return
    resume = f"`wfops resume {run_id}` continues the run from its last committed step"
    if isinstance(exc, StoreError) and exc.remedy:
        exc.hint = f"{exc.remedy}, then {resume}"
    else:
        exc.hint = f"{exc.hint}; once that is fixed, {resume}" if exc.hint else resume
