"""Rows as every backend stores them: JSON text columns, UTC stamps, run records."""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

from wfops.engine.types import Interrupt, RunSnapshot
from wfops.errors import UnstorableValue
from wfops.jsonvalues import pointer_key, pointer_token
from wfops.store.protocol import RunRecord


def now() -> str:
    return stamp(datetime.now(UTC))


def stamp(moment: datetime) -> str:
    """Fixed-width UTC text, so stamps compare as strings in every backend."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# allow_nan=False: a stored `NaN` would make every later read of the run unparseable outside Python.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False).encode
# The same encoding from the C encoder built once: `JSONEncoder.encode` builds it again on every
# call, a fifth of a step's store work. Without a circular-reference check, which no stored value
# needs: each one has passed `json_problem`, whose walk stops at 200 levels, so a cycle never
# gets here (and would raise RecursionError, one of `UNSTORABLE`, rather than loop).
_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # not in typeshed: CPython's _json
_c_encode = (_make_encoder(None, str, json.encoder.encode_basestring, None, ":", ",", False, False, False)
             if _make_encoder is not None else None)


#: The C encoder's one-shot form, for a caller that encodes objects and lists on its hot path
#: without a call of `dump` for each (`"".join(ENCODE_CONTAINER(value, 0))` is `dump(value)` for
#: a dict or a list); None where the interpreter has no C encoder.
ENCODE_CONTAINER: Any = _c_encode


def dump(value: Any) -> str | None:
    if value is None:
        return None
    if _c_encode is None or isinstance(value, str):  # a bare string is not encoded by the C encoder's one-shot form
        return _encode(value)
    return "".join(_c_encode(value, 0))


def changes_text(changes: list[dict[str, Any]], output: Any, output_text: str | None) -> str:
    """`dump(changes) or "[]"`, with the JSON of a change that wrote the step's output itself
    (its `value` is `output`, the same object, as a `save:` of the whole output writes it) made
    from `output_text`, the output's own JSON, instead of encoding the output a second time."""
    if not changes:
        return "[]"
    if output_text is None or _c_encode is None or not any(map(_wrote_whole, changes, repeat(output))):
        return dump(changes) or "[]"
    parts = [f'{{"path":{_encode_string(change["path"])},"value":{output_text}}}' if _wrote_whole(change, output)
             else "".join(_c_encode(change, 0)) for change in changes]
    return f"[{','.join(parts)}]"


def _wrote_whole(change: Any, output: Any) -> bool:
    """Whether `change` is `{"path": <str>, "value": output}`, keys in that order, the value that very object."""
    return type(change) is dict and len(change) == 2 and change.get("value") is output \
        and next(iter(change)) == "path" and type(change["path"]) is str


_encode_string = json.encoder.encode_basestring  # what the encoder writes a string with


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


#: Characters of JSON from which a step's output is stored once in its trace row: a state
#: change that wrote it (or one of its top-level fields) points into it instead of holding a
#: copy. Smaller outputs keep the plain form, which costs nothing to read back.
LARGE_OUTPUT = 65_536


def shared_changes(output: Any, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The state changes of a step whose output is large, as its trace row stores them: a
    write of the output itself, or of one of its top-level fields (the same object, as the
    engine's `save:` writes it), becomes `{"path": ..., "output": POINTER}`."""
    shared = []
    for change in changes:
        pointer = _pointer_in(output, change.get("value"))
        shared.append(change if pointer is None else {"path": change["path"], "output": pointer})
    return shared


def resolved_changes(output: Any, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`shared_changes` undone: every change holds its `value` again."""
    if not any("value" not in change for change in changes):
        return changes
    return [change if "value" in change else {"path": change["path"], "value": _at(output, change["output"])}
            for change in changes]


#: A value a run has stored as (part of) a large trace output: id -> (the value, its trace
#: row's seq, its JSON Pointer in that row's output).
Known = dict[int, tuple[Any, int, str]]


def large_parts(seq: int, output: Any) -> Known:
    """What a large trace output can lend the run's output: itself and its top-level fields."""
    parts: Known = {id(output): (output, seq, "")}
    if isinstance(output, dict):
        for key, field in output.items():
            if isinstance(field, str | list | dict):
                parts[id(field)] = (field, seq, _escaped(key))
    return parts


def shared_output(output: Any, known: Known) -> tuple[str | None, str | None]:
    """The run's output as its row stores it: its JSON, with null where a value is (the same
    object as) a part of a large trace output, and the refs `{POINTER: [seq, POINTER]}` that
    say which; refs None when nothing is shared."""
    if output is None or not known:
        return dump(output), None
    whole = known.get(id(output))
    if whole is not None and whole[0] is output:
        return "null", dump({"": [whole[1], whole[2]]})
    if isinstance(output, dict):
        refs = {}
        for key, value in output.items():
            found = known.get(id(value))
            if found is not None and found[0] is value:
                refs[_escaped(key)] = [found[1], found[2]]
        if refs:
            kept = {key: None if _escaped(key) in refs else value for key, value in output.items()}
            return dump(kept), dump(refs)
    return dump(output), None


def resolved_output(output: Any, refs: dict[str, list[Any]], trace_output: Callable[[int], Any]) -> Any:
    """`shared_output` undone, reading each referred trace row's output with `trace_output(seq)`."""
    for pointer, (seq, inner) in refs.items():
        value = _at(trace_output(int(seq)), str(inner))
        if not pointer:
            return value
        output = {**output, pointer_key(pointer[1:]): value}
    return output


def _escaped(key: Any) -> str:
    return "/" + pointer_token(key)


def _pointer_in(output: Any, value: Any) -> str | None:
    if not isinstance(value, str | list | dict):
        return None  # numbers, booleans, null: nothing to share
    if value is output:
        return ""
    if isinstance(output, dict):
        for key, field in output.items():
            if field is value:
                return _escaped(key)
    return None


def _at(output: Any, pointer: str) -> Any:
    if not pointer:
        return output
    return output[pointer_key(pointer[1:])]


def interrupt_dict(interrupt: Interrupt | None) -> dict[str, Any] | None:
    if interrupt is None:
        return None
    return {"id": interrupt.id, "step": interrupt.step, "kind": interrupt.kind,
            "request": interrupt.request, "outcomes": list(interrupt.outcomes),
            "resume_schema": interrupt.resume_schema}


def record(row: tuple[Any, ...] | list[Any]) -> RunRecord:
    """A run record from the columns `RUN_COLUMNS`-style queries select, in their order (the
    output as stored: `output_refs`, the last column, is the store's to resolve)."""
    (run_id, deployment, workflow, artifact, status, outcome, output, error, interrupt, cursor,
     steps, created_at, updated_at, input_text, meta, _refs) = row
    data = load(interrupt)
    snapshot = RunSnapshot(
        run_id=run_id, workflow=workflow, artifact=artifact, deployment=deployment, status=status,
        input=load(input_text), outcome=outcome, output=load(output), error=load(error),
        interrupt=Interrupt(**data) if data else None, cursor=load(cursor) or {})
    return record_around(snapshot, steps, created_at, updated_at, meta)


def record_around(snapshot: RunSnapshot, steps: int, created_at: str, updated_at: str, meta: str | None) -> RunRecord:
    """A run record: `snapshot` with what the store keeps beside it (`meta` as stored, JSON or NULL)."""
    return RunRecord(snapshot=snapshot, created_at=created_at, updated_at=updated_at, steps=steps,
                     meta=load(meta) or {})


def check_text(rows: list[tuple[Any, ...]]) -> None:
    """Every text column is Unicode every backend can store (a lone surrogate fails only at
    INSERT): raises UnicodeEncodeError otherwise."""
    for row in rows:
        for column in row:
            # ASCII text (most columns of most rows) is valid as it stands: no encoded copy.
            if isinstance(column, str) and not column.isascii():
                column.encode("utf-8")


UNSTORABLE = (ValueError, RecursionError)  # what encoding a value raises (UnicodeEncodeError is a ValueError)


def unstorable(run_id: str, exc: BaseException) -> UnstorableValue:
    """The step failure for a value that cannot be stored, naming why but never the value."""
    return UnstorableValue(f"a value of run {run_id} cannot be stored as JSON: {_brief(exc)}")


def _brief(exc: BaseException) -> str:
    # Never the value itself: it may be huge, or hold a secret the redactor did not know.
    if isinstance(exc, UnicodeEncodeError):
        return "the text is not valid Unicode (it holds a lone surrogate)"
    if isinstance(exc, RecursionError):
        return "the value is nested too deeply"
    text = str(exc)
    if "Out of range float" in text:
        return "a number is not finite (NaN or infinity)"
    if "integer string conversion" in text:
        return "an integer has too many digits"
    return text.splitlines()[0][:200] if text else type(exc).__name__
