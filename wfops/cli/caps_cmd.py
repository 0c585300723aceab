"""`wfops caps list|show|call`: the capability catalog.

Refs here are CONCRETE (`<source id>.<capability>`, as in sources.yaml), not the
logical names a workflow binds through a deployment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.cli.output import print_json, say, warn
from wfops.errors import UsageError, WfopsError

if TYPE_CHECKING:
    from wfops.sources.base import CallResult, Source
    from wfops.sources.catalog import Catalog


def run(*, action: str, source: str | None = None, ref: str | None = None, input_file: str | None = None,
        json_out: bool = False, project: str | None = None) -> int:
    from wfops.loader.project import find_root
    from wfops.sources.catalog import load_catalog

    catalog = load_catalog(find_root(Path.cwd(), project))
    for d in catalog.diagnostics:
        if d.file == "sources.yaml":  # a broken source is missing from the catalog: say why
            warn(f"{d.file}:{d.line}:{d.column}: {d.severity}[{d.code}] {d.message}")
    if action == "list":
        return _list(catalog, source, json_out)
    if action == "show":
        return _show(catalog, ref or "", json_out)
    if action == "call":
        return _call(catalog, ref or "", input_file or "")
    raise UsageError(f"unknown caps action {action!r}")


def _list(catalog: Catalog, source: str | None, json_out: bool) -> int:
    entries, notes = catalog.entries(source)
    for note in notes:
        warn(f"note: {note}")
    if json_out:
        print_json([e.to_dict() for e in entries])
        return 0
    width = max((len(e.capability.ref) for e in entries), default=10)
    for entry in entries:
        cap = entry.capability
        first = _first_sentence(cap.description)
        origin = "  (from wfops.lock)" if entry.origin == "lock" else ""
        outcomes = "" if cap.outcomes == ("ok",) else f"  [{', '.join(cap.outcomes)}]"
        say(f"{cap.ref:<{width}}  {first}{outcomes}{origin}")
    return 0


def _first_sentence(text: str, limit: int = 90) -> str:
    paragraph = " ".join((text or "").strip().split("\n\n", 1)[0].split())
    sentence = paragraph.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _show(catalog: Catalog, ref: str, json_out: bool) -> int:
    from wfops.sources.catalog import Entry

    _, cap = catalog.capability(ref)
    entry = Entry(cap, "live").to_dict(schemas=True)
    if json_out:
        print_json(entry)
        return 0
    say(cap.ref)
    if cap.description:
        say("")
        say(_indent(cap.description.strip()))
    say("")
    say(f"outcomes:      {', '.join(cap.outcomes)}")
    say(f"contract hash: {cap.contract_hash}")
    for title, schema in (("input schema", cap.input_schema), ("output schema", cap.output_schema)):
        say(f"{title}:")
        say(_indent(json.dumps(schema, indent=2, ensure_ascii=False)))
    return 0


def _indent(text: str) -> str:
    return "\n".join("  " + line if line.strip() else "" for line in text.splitlines())


def _call(catalog: Catalog, ref: str, input_file: str) -> int:
    import asyncio

    from wfops.runner.inputs import read_input_file

    source, cap = catalog.capability(ref)
    payload = read_input_file(input_file)
    problem = _schema_problem(payload, cap.input_schema)
    if problem:
        raise WfopsError(f"input does not match {cap.ref}'s input schema: {problem}",
                         hint=f"`wfops caps show {cap.ref}` shows the schema")
    try:
        result = asyncio.run(_invoke(source, cap.name, payload))
    except WfopsError as exc:
        raise WfopsError(f"{cap.ref} failed: {exc.message}", hint=exc.hint) from None
    except Exception as exc:  # the capability's own code: a failure, not a wfops crash
        raise WfopsError(f"{cap.ref} failed: {type(exc).__name__}: {exc}") from None
    print_json({"outcome": result.outcome, "output": result.output})
    return 0


async def _invoke(source: Source, name: str, payload: dict[str, Any]) -> CallResult:
    import uuid

    from wfops.sources.base import StepContext

    run_id = f"caps-{uuid.uuid4().hex[:12]}"
    context = StepContext(run_id=run_id, workflow="", deployment=None, step=name, attempt=1,
                          idempotency_key=f"{run_id}:{name}:0")
    await source.open()
    try:
        return await source.call(name, payload, context)
    finally:
        await source.close()


def _schema_problem(payload: dict[str, Any], schema: dict[str, Any]) -> str | None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        error = next(iter(Draft202012Validator(schema).iter_errors(payload)), None)
    except SchemaError:
        return None  # the source's own schema is broken; let the source judge the input
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "input"
    return f"{where}: {error.message}"
