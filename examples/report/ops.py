"""Nodes of the meeting-report example: read notes, extract a report, render Markdown.

The notes format is plain Markdown, parsed deterministically (no LLM):

    # Weekly sync                      <- title (first level-1 heading)
    Date: 2026-11-23                   <- optional
    Attendees: Ana, Bruno, Chen        <- optional, comma separated

    ## Decisions                       <- one bullet per decision
    - Ship v1 on Friday

    ## Action items                    <- `Owner: task`, `@owner task` or just `task`
    - [ ] Ana: write the release notes (due 2026-11-27)
    - [x] Bruno: book the room

Other sections are ignored. Notes with no decisions and no action items end in the
`empty` outcome: there is nothing to report.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

import wfops

# The project root is where this module lives (examples/report/ops.py): notes paths are
# resolved against it, never against the current directory, so `wfops run` works from
# any subdirectory and cannot be pointed at files outside the project.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
MAX_NOTES_BYTES = 256 * 1024


class ReadIn(BaseModel):
    path: str = Field(description="Notes file, relative to the project root.")


class Notes(BaseModel):
    text: str = Field(description="The notes, as text.")
    summary: str = Field(description="One log line about what was read.")


class ActionItem(BaseModel):
    task: str
    owner: str | None = Field(None, description="Who does it, when the notes say.")
    due: str | None = Field(None, description="`(due YYYY-MM-DD)` in the item, when present.")
    done: bool = Field(False, description="True for a ticked `[x]` checkbox.")


class Report(BaseModel):
    title: str
    date: str | None = None
    attendees: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(default_factory=list)


class ExtractIn(BaseModel):
    text: str = Field(description="Meeting notes in the format described in the module docs.")


class RenderIn(BaseModel):
    report: Report


class Rendered(BaseModel):
    markdown: str
    summary: str = Field(description="One log line about what was rendered.")


@wfops.node
def read_notes(payload: ReadIn) -> Notes:
    """Read a notes file from inside the project. Absolute paths and paths that leave
    the project (`..`, symlinks) are refused."""
    relative = Path(payload.path)
    if relative.is_absolute():
        raise ValueError(f"notes path {payload.path!r} must be relative to the project root")
    target = (PROJECT_ROOT / relative).resolve()
    if not target.is_relative_to(PROJECT_ROOT):
        raise ValueError(f"notes path {payload.path!r} points outside the project")
    if not target.is_file():
        raise ValueError(f"notes file {payload.path!r} does not exist")
    if target.stat().st_size > MAX_NOTES_BYTES:
        raise ValueError(f"notes file {payload.path!r} is larger than {MAX_NOTES_BYTES} bytes")
    text = target.read_text(encoding="utf-8")
    return Notes(text=text, summary=f"read {len(text.splitlines())} lines from {payload.path}")


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[(?P<box>[ xX])\]\s+)?(?P<text>.+?)\s*$")
_FIELD = re.compile(r"^\s*(?P<key>date|attendees|participants)\s*:\s*(?P<value>.*?)\s*$", re.IGNORECASE)
_DUE = re.compile(r"\s*\(due:?\s*(?P<due>[^)]+?)\s*\)")
_OWNER_COLON = re.compile(r"^(?P<owner>[A-Z][\w.'-]*(?:\s[A-Z][\w.'-]*)?)\s*:\s+(?P<task>.+)$")
_OWNER_AT = re.compile(r"^@(?P<owner>[\w.-]+)\s+(?P<task>.+)$")
_SECTIONS = {"decisions": "decisions", "decision": "decisions", "action items": "actions",
             "actions": "actions", "action points": "actions", "todo": "actions", "to do": "actions"}


def parse_notes(text: str) -> Report:
    """The deterministic parser behind `extract_report` (exposed for tests)."""
    title, date, attendees = "", None, []
    decisions: list[str] = []
    actions: list[ActionItem] = []
    section: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            level, name = len(heading.group(1)), heading.group(2)
            if level == 1 and not title:
                title, section = name, None
            else:
                section = _SECTIONS.get(name.strip().rstrip(":").lower())
            continue
        field = _FIELD.match(line)
        if field and section is None:
            if field.group("key").lower() == "date":
                date = field.group("value") or None
            else:
                attendees = [a.strip() for a in field.group("value").split(",") if a.strip()]
            continue
        bullet = _BULLET.match(line)
        if bullet is None or section is None:
            continue
        if section == "decisions":
            decisions.append(bullet.group("text"))
        else:
            actions.append(_action(bullet.group("text"), bullet.group("box")))
    return Report(title=title or "Untitled meeting", date=date, attendees=attendees,
                  decisions=decisions, action_items=actions)


def _action(text: str, box: str | None) -> ActionItem:
    due = None
    found = _DUE.search(text)
    if found:
        due, text = found.group("due"), (text[:found.start()] + text[found.end():]).strip()
    owned = _OWNER_COLON.match(text) or _OWNER_AT.match(text)
    owner = owned.group("owner") if owned else None
    task = owned.group("task") if owned else text
    return ActionItem(task=task, owner=owner, due=due, done=(box or " ").lower() == "x")


@wfops.node(outcomes=["ok", "empty"])
def extract_report(payload: ExtractIn) -> wfops.Result[Report]:
    """Extract title, date, attendees, decisions and action items (with owners) from
    meeting notes. Ends in `empty` when the notes hold no decisions and no action items."""
    report = parse_notes(payload.text)
    if not report.decisions and not report.action_items:
        return wfops.Result(outcome="empty")
    return wfops.Result(outcome="ok", output=report)


@wfops.node
def render_markdown_report(payload: RenderIn) -> Rendered:
    """Render a report as Markdown: heading, attendees, numbered decisions, action table."""
    report = payload.report
    lines = [f"# {report.title}", ""]
    if report.date:
        lines.append(f"**Date:** {report.date}  ")
    if report.attendees:
        lines.append(f"**Attendees:** {', '.join(report.attendees)}")
    lines += ["", "## Decisions", ""]
    lines += [f"{n}. {d}" for n, d in enumerate(report.decisions, 1)] or ["_None._"]
    lines += ["", "## Action items", ""]
    if report.action_items:
        lines += ["| | Owner | Task | Due |", "| --- | --- | --- | --- |"]
        lines += [f"| {'x' if a.done else ' '} | {a.owner or '_unassigned_'} | {_cell(a.task)} | {a.due or ''} |"
                  for a in report.action_items]
    else:
        lines.append("_None._")
    markdown = "\n".join(lines) + "\n"
    return Rendered(markdown=markdown, summary=f"rendered {len(report.decisions)} decisions and "
                    f"{len(report.action_items)} action items")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
