"""The GitHub Actions step summary of a run (`$GITHUB_STEP_SUMMARY`).

`wfops run` and `wfops resume` append `step_summary` of the run (via
`Project.step_summary`) when that variable is set: status, outcome, duration, error
or open interrupt, the output as a JSON block, and the Mermaid graph with the path
the run took highlighted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.report.graph import render_graph

if TYPE_CHECKING:
    from wfops.engine.types import RunSnapshot, TraceEntry
    from wfops.model.objects import Workflow

# GitHub caps a step summary at 1 MiB; keep the output block well under it.
MAX_OUTPUT_CHARS = 64 * 1024
_ICONS = {"completed": "✅", "failed": "❌", "interrupted": "⏸️", "running": "⏳", "cancelled": "⏹️"}


def append_step_summary(markdown: str, path: str | Path) -> None:
    """Append a run's summary to the job summary file at `path` (earlier steps' text stays)."""
    with open(path, "a", encoding="utf-8") as stream:
        stream.write(markdown)


def step_summary(snapshot: RunSnapshot | Mapping[str, Any], trace: Sequence[TraceEntry | Mapping[str, Any]],
                 workflow: Workflow) -> str:
    """The summary as markdown text (a `RunSnapshot` or its public dict, and trace entries)."""
    run = dict(snapshot) if isinstance(snapshot, Mapping) else snapshot.to_public()
    entries = [dict(e) if isinstance(e, Mapping) else e.to_dict() for e in trace]
    status = run.get("status") or "unknown"
    name = run.get("deployment") or run.get("workflow")
    lines = [f"### {_ICONS.get(status, '')} wfops run `{name}`: {status}".replace("  ", " "), "",
             "| | |", "| --- | --- |",
             f"| Run | `{run.get('run_id')}` |",
             f"| Workflow | `{run.get('workflow')}` (`{_short(run.get('artifact'))}`) |",
             f"| Status | {status} |"]
    if run.get("outcome") is not None:
        lines.append(f"| Outcome | `{run['outcome']}` |")
    lines.append(f"| Steps | {len(entries)} |")
    duration = _duration(entries)
    if duration is not None:
        lines.append(f"| Duration | {duration:.3f} s |")
    served = [e for e in entries if e.get("cached")]
    if served:
        saved = sum(float((e.get("cached_from") or {}).get("saved") or 0) for e in served)
        names = ", ".join(f"`{e.get('step')}`" for e in served[:10]) + (", …" if len(served) > 10 else "")
        plural = "s" if len(served) != 1 else ""
        lines.append(f"| Cached | {len(served)} step{plural} ({names}), saved {saved:.3f} s |")
    lines.append("")
    outcomes = list(getattr(getattr(snapshot, "interrupt", None), "outcomes", None) or [])
    lines += _error(run.get("error")) + _interrupt(run, outcomes)
    lines += ["#### Output", "", _json_block(run.get("output")), ""]
    lines += ["#### Graph", "", "```mermaid",
              render_graph(workflow, "mermaid", taken_path(entries, status),
                           cached=[str(e.get("step")) for e in served]).rstrip("\n"), "```", ""]
    return "\n".join(lines) + "\n"


def taken_path(entries: Sequence[dict[str, Any]], status: str) -> list[str]:
    """Top-level step ids in the order the run went through them (retries and nested
    frames folded into their top-level step), plus `end` when the run ended by `next: end`."""
    path: list[str] = []
    last_next: str | None = None
    for entry in entries:
        step = str(entry.get("step", "")).split("/", 1)[0].split("[", 1)[0]
        if not step:
            continue
        if not path or path[-1] != step:
            path.append(step)
        if "/" not in str(entry.get("step", "")):
            last_next = entry.get("next")
    if status == "completed" and last_next == "end":
        path.append("end")
    return path


def _duration(entries: Sequence[dict[str, Any]]) -> float | None:
    try:
        start = min(datetime.fromisoformat(str(e["started_at"])) for e in entries)
        end = max(datetime.fromisoformat(str(e["ended_at"])) for e in entries)
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def _error(error: Any) -> list[str]:
    """The error text goes in a code block: a run's message is data, never Markdown (a
    ``` line or a table row in it must not reshape the rest of the summary)."""
    if not error:
        return []
    if isinstance(error, dict):
        where = f" in step `{error['step']}`" if error.get("step") else ""
        text = f"{error.get('type', 'error')}: {error.get('message', '')}"
    else:
        where, text = "", str(error)
    return [f"**Error**{where}:", "", _fenced(text, "text"), ""]


def _interrupt(run: dict[str, Any], outcomes: list[str]) -> list[str]:
    interrupt = run.get("interrupt")
    if not interrupt:
        return []
    choices = f" where OUTCOME is one of {', '.join(f'`{o}`' for o in outcomes)}" if outcomes else ""
    return [f"**Waiting** at step `{interrupt.get('step')}` ({interrupt.get('kind')}); request:", "",
            _json_block(interrupt.get("request")), "",
            f"Resume with `wfops resume {run.get('run_id')} --outcome OUTCOME --payload '<json>'`{choices}.", ""]


def _json_block(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + "\n… (truncated; see `wfops runs show`)"
    return _fenced(text, "json")


def _fenced(text: str, info: str) -> str:
    """A fenced code block whose fence is longer than any backtick run inside `text`, so
    no line of the text can close it (CommonMark: a closing fence is at least as long)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _short(artifact: Any) -> str:
    text = str(artifact or "")
    return text[:19] if text.startswith("sha256:") else text[:12]
