"""A project whose nodes, inputs and secrets are hostile, and the checks every hostile-value
test makes afterwards: the store holds only valid JSON, no run is left `running`, and no
form of a secret appears in the outputs or the store's bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import write

OPS = '''
from typing import Any

from pydantic import BaseModel

import wfops


class Kind(BaseModel):
    kind: str


class Out(BaseModel):
    value: Any = None


class BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("this __str__ raises")


VALUES = {"inf": float("inf"), "nan": float("nan"), "big": 10 ** 4500, "surrogate": "a\\udc80b",
          "nested": [], "ok": 1}


@wfops.node
def emit(payload: Kind) -> wfops.Result[Out]:
    # A plain dict output bypasses pydantic's own JSON conversion: the contract must judge it.
    value = VALUES[payload.kind]
    if payload.kind == "nested":
        for _ in range(300):
            value = [value]
    return wfops.Result(output={"value": value})


@wfops.node
def boom(payload: Kind) -> Out:
    if payload.kind == "broken-str":
        raise BrokenStr()
    if payload.kind == "keyboard":
        raise KeyboardInterrupt()
    if payload.kind == "exit":
        raise SystemExit(7)
    raise ValueError("a \\udc80 lone surrogate in a message, and " + "x" * 10_000)


@wfops.node
async def aboom(payload: Kind) -> Out:
    return boom(payload)
'''

EMIT = """
name: emit
input: {type: object, properties: {kind: {type: string}}}
state: {v: {}}
output: {v: $state.v}
steps:
  - {id: emit, uses: ops.emit, with: {kind: $input.kind}, save: {value: state.v}, next: end}
"""

# The sync node fails, is caught, then the async one (awaited under a timeout) fails the run.
BOOM = """
name: boom
input: {type: object, properties: {kind: {type: string}}}
state: {first: {type: object}}
steps:
  - {id: sync, uses: ops.boom, with: {kind: $input.kind}, catch: {next: async, save: state.first}, next: end}
  - {id: async, uses: ops.aboom, with: {kind: $input.kind}, timeout: 30, next: end}
"""

ADD = """
name: add
input: {type: object}
state: {n: {type: number, reducer: add}}
output: {n: $state.n}
steps:
  - {id: a, uses: std.echo, with: {value: $input.a}, save: {value: state.n}, next: b}
  - {id: b, uses: std.echo, with: {value: $input.b}, save: {value: state.n}, next: end}
"""

ASK = """
name: ask
input: {type: object}
state:
  decision: {type: object, required: [by], properties: {by: {type: string, pattern: "^[a-z]+$"}}}
output: {decision: $state.decision}
steps:
  - id: ask
    interrupt: approval
    request: {question: "ship it?"}
    resume_schema: {type: object}
    save: state.decision
    on: {approved: end}
"""

# `^(a|a)*$` backtracks exponentially on "aaaa...!" in every backtracking engine.
EVIL = "^(a|a)*$"
EVIL_TEXT = "a" * 40 + "!"

GUARDED = f"""
name: guarded
input: {{type: object, properties: {{name: {{type: string, pattern: "{EVIL}"}}, tag: {{}}}}}}
state: {{tag: {{type: string, pattern: "{EVIL}"}}}}
output: {{tag: $state.tag}}
steps:
  - {{id: tag, uses: std.echo, with: {{value: $input.tag}}, save: {{value: state.tag}}, next: end}}
"""

GUARDED_ASK = f"""
name: guarded_ask
input: {{type: object}}
steps:
  - id: ask
    interrupt: approval
    resume_schema: {{type: object, properties: {{name: {{type: string, pattern: "{EVIL}"}}}}}}
    on: {{approved: end}}
"""

# A secret saved where its schema refuses it, and handed to a subworkflow that refuses it:
# both messages quote the value (Python's repr in schema errors).
SECRET_SAVE = """
name: secret_save
input: {type: object}
state: {code: {type: integer}}
output: {code: $state.code}
steps:
  - {id: keep, uses: std.echo, with: {value: $secret.KEY}, save: {value: state.code}, next: end}
"""

SECRET_CHILD = """
name: secret_child
input: {type: object}
state: {kept: {}}
steps:
  - {id: keep, uses: std.echo, with: {value: $secret.KEY}, save: {value: state.kept}, next: hand}
  - {id: hand, workflow: needs_number, with: {n: $state.kept}, next: end}
"""

NEEDS_NUMBER = """
name: needs_number
input: {type: object, required: [n], properties: {n: {type: integer}}}
steps:
  - {id: done, end: ok}
"""

WORKFLOWS = {"emit": EMIT, "boom": BOOM, "add": ADD, "ask": ASK, "guarded": GUARDED,
             "guarded_ask": GUARDED_ASK, "secret_save": SECRET_SAVE, "secret_child": SECRET_CHILD,
             "needs_number": NEEDS_NUMBER}
SECRET_DEPLOYMENTS = ("secret_save", "secret_child")

# A multi-line key with everything an escaper changes: newlines, a backslash, both quotes,
# non-ASCII. Each body line is long enough to be recognised on its own.
PEM = ("-----BEGIN TEST PRIVATE KEY-----\n"
       "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\BKcwggSjAgEAAoIBAQC7'quoted\"é\n"
       "c2VjcmV0LWxpbmUtdHdvLW9mLXRoZS1rZXktYm9keS1oZXJl0123456789abcd\n"
       "-----END TEST PRIVATE KEY-----")


def make_hostile_project(root: Path) -> Path:
    files = {"sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS}
    for name, text in WORKFLOWS.items():
        files[f"workflows/{name}.yaml"] = text
        if name != "needs_number":
            secrets = "secrets: [KEY]\n" if name in SECRET_DEPLOYMENTS else ""
            files[f"deployments/{name}.yaml"] = f"name: {name}.local\nworkflow: {name}\n{secrets}"
    return write(root, files)


def secret_forms(secret: str) -> set[str]:
    """Every form of `secret` a message or a store could carry it in."""
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    for line in secret.splitlines():
        if "BEGIN" not in line and "END" not in line:
            forms |= {line, repr(line)[1:-1], json.dumps(line)[1:-1]}
    return forms


def assert_no_secret(secret: str, *texts: str) -> None:
    for text in texts:
        for form in secret_forms(secret):
            assert form not in text, f"a form of the secret leaked: {form!r}"


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"the store holds {name}, which is not JSON")

    return json.loads(text, parse_constant=refuse)


JSON_COLUMNS = {"runs": ("output", "error", "interrupt", "cursor"),
                "trace": ("input", "output", "state_changes", "error", "cursor"),
                "run_inputs": ("input", "meta")}


def assert_store_sound(db: Path, *, secret: str | None = None) -> list[str]:
    """Every JSON column parses strictly, no run is left `running`; the statuses, in order."""
    conn = sqlite3.connect(db)
    try:
        for table, columns in JSON_COLUMNS.items():
            for row in conn.execute(f"SELECT {', '.join(columns)} FROM {table}"):  # noqa: S608 - fixed names
                for text in row:
                    if text is not None:
                        _strict(text)
        statuses = [status for (status,) in conn.execute("SELECT status FROM runs ORDER BY rowid")]
    finally:
        conn.close()
    assert "running" not in statuses, statuses
    if secret is not None:
        stored = b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*"))
        for form in secret_forms(secret):
            assert form.encode() not in stored, f"a form of the secret is in the store: {form!r}"
    return statuses
