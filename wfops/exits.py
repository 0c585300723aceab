"""The CLI's exit statuses: the one place errors and run results become numbers.

    0   done (a run completed)          1   errors found, a run failed, a known error
    2   usage error, or a run refused   3   a run is interrupted or stopped (waits for `wfops resume`)
    4   the store is locked, corrupt or too new
    5   another process is driving the run
    6   a run ended `cancelled` (Ctrl-C on its driver, or `wfops cancel`; `wfops resume` continues it)
    70  a bug in wfops (a crash log is written)     130  Ctrl-C outside a run
"""

from __future__ import annotations

from wfops.errors import (
    ProjectNotFound,
    RefusedError,
    RunBusyError,
    RunStopped,
    StoreError,
    UsageError,
    WfopsError,
)

CRASH = 70
INTERRUPTED = 130
CANCELLED = 6
RUN_STATUS = {"completed": 0, "failed": 1, "interrupted": 3, "cancelled": CANCELLED}

# Most specific first: RunBusyError is a StoreError.
_ERRORS: tuple[tuple[type[WfopsError], int], ...] = (
    (UsageError, 2), (RefusedError, 2), (ProjectNotFound, 2), (RunBusyError, 5), (StoreError, 4),
    (RunStopped, 3),  # not done, resumable, like an interrupted run
)


def for_error(exc: WfopsError) -> int:
    for kind, code in _ERRORS:
        if isinstance(exc, kind):
            return code
    return 1


def for_run(status: str) -> int:
    """A run that ends `running` (its driver was stopped) is not done: 1."""
    return RUN_STATUS.get(status, 1)
