"""What stops a driven run early: a cancel request in the store (`wfops cancel` from any
process) or Ctrl-C in the driving process. The engine polls `requested` while it drives."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from wfops.errors import StoreError
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
