"""What a bug looks like to a user: one line and the path of a crash log, never a raw traceback."""

from __future__ import annotations

import sys
import tempfile
import traceback
from pathlib import Path

from wfops.dburl import redact
from wfops.exits import CRASH
from wfops.redact import mask


def report_crash(exc: BaseException) -> int:
    # A store URL's password must not reach the log even through an unexpected error.
    # Nor a declared secret: an exception's text may quote what a source printed.
    text = mask(redact("".join(traceback.format_exception(exc))))
    try:
        handle, name = tempfile.mkstemp(prefix="wfops-crash-", suffix=".log")
        with open(handle, "w", encoding="utf-8") as out:
            out.write(text)
        where = f"the details are in {Path(name)}"
    except OSError:
        where = "no crash log could be written"
    sys.stderr.write(f"wfops: internal error: {type(exc).__name__}: {mask(redact(str(exc)))}\n  this is a bug in wfops; {where}\n")
    return CRASH
