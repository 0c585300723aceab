"""One trace entry as one line of text: `#3 render [call] ok -> end (4.5 ms)`.

The CLI's progress lines and `runs trace`, and the MCP server's progress
notifications, all say a step this way.
"""

from __future__ import annotations

from datetime import datetime

from wfops.engine.types import TraceEntry


def describe(entry: TraceEntry) -> str:
    result = entry.outcome or ("waiting" if entry.kind == "interrupt" else "-")
    if entry.error:
        result = f"error {entry.error.get('type', '')}: {entry.error.get('message', '')}"
    arrow = f" -> {entry.next}" if entry.next else ""
    # Attempt counts show once a step was retried (a `retry` entry is a failed attempt kept).
    attempt = f" attempt {entry.attempt}" if entry.attempt > 1 or entry.kind == "retry" else ""
    return f"  #{entry.seq} {entry.step} [{entry.kind}]{attempt} {result}{arrow} ({_ms(entry)}){cached_note(entry)}"


def cached_note(entry: TraceEntry) -> str:
    """` cached from RUN step#SEQ, saved 1.2 s` for a step served from the step cache, else ""."""
    origin = entry.cached
    if not origin:
        return ""
    return (f" cached from {origin.get('run_id')} {origin.get('step')}#{origin.get('seq')}, "
            f"saved {seconds(origin.get('saved'))}")


def seconds(value: object) -> str:
    """A time in seconds as people read it: `850 ms`, `1.2 s`."""
    if not isinstance(value, int | float):
        return "?"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def _ms(entry: TraceEntry) -> str:
    try:
        start = datetime.fromisoformat(entry.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(entry.ended_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return "?"
    ms = (end - start).total_seconds() * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
