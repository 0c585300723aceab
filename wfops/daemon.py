"""Sync work in a daemon thread of its own, awaited from the event loop.

A thread cannot be cancelled. Work stuck past its caller's patience keeps its thread, but
nobody waits for it: the awaiting task can be cancelled (a step's timeout), the event loop
closes without joining it (it is not in the loop's executor), and the interpreter exits
without joining it (it is a daemon). So no caller, CLI, MCP server or embedding program, is
held by a hung node or a capability call that never returns.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_daemon_thread(work: Callable[[], T], name: str) -> T:
    """`work()` in a daemon thread named `name`, with the caller's context variables."""
    import asyncio  # deferred: asyncio (~33 ms); validation imports python sources but never calls one

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():  # cancelled (a timeout, a client gone): nobody wants the value any more
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def target() -> None:
        try:
            result: tuple[bool, Any] = (True, context.run(work))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller, which judges it
            result = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed: the caller is long gone
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future
