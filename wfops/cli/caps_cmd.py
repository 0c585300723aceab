"""`wfops caps list|show|call`: the capability catalog.

Refs here are CONCRETE (`<source id>.<capability>`, as in sources.yaml), not the
logical names a workflow binds through a deployment.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from wfops.api import Project
from wfops.api.inputs import read_input_file
from wfops.api.step_snippet import example_step
from wfops.cli.output import print_json, say, warn

if TYPE_CHECKING:
    from wfops.api import Capabilities, Project


def run(*, action: str, source: str | None = None, ref: str | None = None, input_file: str | None = None,
        json_out: bool = False, project: str | None = None) -> int:

    found = Project(project)
    if action == "list":
        return _list(found.capabilities(source), json_out)
    if action == "show":
        return _show(found, ref or "", json_out)
    if action == "call":
        payload = read_input_file(input_file or "", "--input-file")
        print_json(found.call(ref or "", payload).to_dict())
        return 0
    raise ValueError(f"unknown caps action {action!r}")


def _list(listing: Capabilities, json_out: bool) -> int:
    for d in listing.diagnostics:  # a broken source is missing from the catalog: say why
        warn(f"{d.file}:{d.line}:{d.column}: {d.severity}[{d.code}] {d.message}")
    for note in listing.notes:
        warn(f"note: {note}")
    if json_out:
        print_json([c.to_dict(schemas=False) for c in listing.capabilities])
        return 0
    width = max((len(c.ref) for c in listing.capabilities), default=10)
    for cap in listing.capabilities:
        origin = "  (from wfops.lock)" if cap.origin == "lock" else ""
        outcomes = "" if cap.outcomes == ["ok"] else f"  [{', '.join(cap.outcomes)}]"
        say(f"{cap.ref:<{width}}  {_first_sentence(cap.description)}{outcomes}{origin}")
    return 0


def _first_sentence(text: str, limit: int = 90) -> str:
    paragraph = " ".join((text or "").strip().split("\n\n", 1)[0].split())
    sentence = paragraph.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _show(found: Project, ref: str, json_out: bool) -> int:
    cap = found.capability(ref)
    if json_out:
        print_json(cap.to_dict())
        return 0
    say(cap.ref)
    if cap.description:
        say("")
        say(_indent(cap.description.strip()))
    say("")
    say(f"outcomes:      {', '.join(cap.outcomes)}")
    say(f"contract hash: {cap.contract_hash}")
    if cap.defaults:
        say("defaults:      " + ", ".join(f"{key} {json.dumps(value)}" for key, value in cap.defaults.items())
            + " (a step's own `retry`/`timeout` overrides them)")
    if cap.annotations:
        say("annotations:   " + ", ".join(f"{key} {json.dumps(value)}" for key, value in cap.annotations.items()))
    for title, schema in (("input schema", cap.input_schema), ("output schema", cap.output_schema)):
        say(f"{title}:")
        say(_indent(json.dumps(schema, indent=2, ensure_ascii=False)))
    say("a step calling it (paste under `steps:`; rename, rebind and reroute as needed):")
    say(example_step(cap).rstrip("\n"))
    return 0


def _indent(text: str) -> str:
    return "\n".join("  " + line if line.strip() else "" for line in text.splitlines())
