"""A deployment's `executor.address` is one wfops can connect to: what validates, runs.

The rule (protocols, host, port) is the executor's own (`scheduler_address`), so validate
and `wfops run` can never disagree about an address."""

from __future__ import annotations

from wfops.compiler.checks.context import CheckContext
from wfops.errors import UsageError
from wfops.loader.project import Loaded


def check_executor(ctx: CheckContext, loaded: Loaded) -> None:
    executor = loaded.model.executor
    if getattr(executor, "kind", None) != "dask":
        return
    # deferred: the address parser (a dataclass, ipaddress) only for a Dask executor
    from wfops.sources.scheduler import scheduler_address

    try:
        scheduler_address(executor.address)
    except UsageError as exc:
        ctx.sink.error("invalid-executor-address", exc.message, loaded, ("executor", "address"), hint=exc.hint)
