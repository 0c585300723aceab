"""Hints that name the closest valid choice."""

from __future__ import annotations

from collections.abc import Iterable


def suggest(wrong: str, choices: Iterable[str], fallback: str, *, limit: int = 8) -> str:
    # deferred: difflib (~1 ms at start-up) only when there is a finding to give a hint for
    import difflib

    options = sorted(set(choices))
    close = difflib.get_close_matches(wrong, options, n=1, cutoff=0.6)
    listed = ", ".join(f"`{o}`" for o in options[:limit]) + (", ..." if len(options) > limit else "")
    if close:
        return f"did you mean `{close[0]}`?" + (f" (choices: {listed})" if listed else "")
    return f"{fallback}; choices: {listed}" if listed else fallback
