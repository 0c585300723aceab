"""A node that returns `$secret.TOKEN` re-encoded (base64 wrapped at 76 characters or
unpadded, lower-case or double %-encoding, JSON escaped twice, `repr(bytes)`, hex, split
across lines) leaks it in no channel: `run` (text and `--json`), `runs trace` and `runs show`
(text and JSON, shown with the variable unset: what is stored is masked). And a secret's
value given as run input (`--input`, `--input-file`, `--payload`, the API's `input=`) is
refused naming the secret, never showing it, and nothing is stored. `caps call`, which
runs no engine, masks what the node returns or raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.runner.helpers import env_for, wfops
from wfops.api import Project
from wfops.errors import UsageError
from wfops.redact import MASK

# Everything an encoder changes: a slash, a plus, both quotes, a backslash, a space, non-ASCII.
TOKEN = 'tok/"é+Z\\q mcpTok77QQzzAb\'9'


# The encoders, as the project's node module runs them and as this test reads them back.
ENCODERS = '''import base64
import json
import re
from urllib.parse import quote


def _lower_hex(text):
    return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


ENCODINGS = {
    "base64-wrapped": lambda t: base64.encodebytes(t.encode() * 3).decode(),  # 76-character lines
    "base64-unpadded": lambda t: base64.urlsafe_b64encode(b"x" + t.encode()).decode().rstrip("="),
    "percent-lower": lambda t: _lower_hex(quote(t, safe="")),
    "percent-double": lambda t: quote(quote(t, safe=""), safe=""),
    "json-double": lambda t: json.dumps(json.dumps(t)),
    "repr-bytes": lambda t: repr(t.encode()),
    "hex": lambda t: t.encode().hex(),
    "split-lines": lambda t: t[:12] + "\\n" + t[12:],
}

'''
_encoders: dict[str, Any] = {}
exec(ENCODERS, _encoders)  # the test's own text: the same encoders on both sides
ENCODINGS = _encoders["ENCODINGS"]

OPS = ENCODERS + '''
from pydantic import BaseModel

import wfops


class In(BaseModel):
    kind: str
    token: str


class Out(BaseModel):
    text: str


@wfops.node
def encode(payload: In) -> Out:
    if payload.kind == "raise":
        raise ValueError(f"refused: {payload.token}")
    return Out(text=ENCODINGS[payload.kind](payload.token))
'''

ENCODE = """
name: encode
input: {type: object, properties: {kind: {type: string}}}
state: {text: {type: string}}
output: {text: $state.text}
steps:
  - {id: encode, uses: ops.encode, with: {kind: $input.kind, token: $secret.TOKEN}, save: {text: state.text},
     next: end}
"""

ASK = """
name: ask
input: {type: object, properties: {mode: {type: string}}}
state: {answer: {type: object}}
steps:
  - {id: ask, interrupt: approval, resume_schema: {type: object}, save: state.answer, on: {approved: end}}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write(tmp_path_factory.mktemp("encodings"), {
        "sources.yaml": "sources:\n  ops: {kind: python, module: ops}\n", "ops.py": OPS,
        "workflows/encode.yaml": ENCODE, "workflows/ask.yaml": ASK,
        "deployments/encode.yaml": "name: encode.local\nworkflow: encode\nsecrets: [TOKEN]\n",
        "deployments/ask.yaml": "name: ask.local\nworkflow: ask\nsecrets: [TOKEN]\n",
    })
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def leaked(encoded: str, text: str) -> str | None:
    """A run of 8 characters of `encoded` (line breaks ignored) found in `text`, if any. Runs
    holding a backslash or a quote are skipped: a JSON channel escapes those again."""
    flat = encoded.replace("\n", "")
    seen = text.replace("\n", "").replace("\\n", "")
    for start in range(len(flat) - 7):
        window = flat[start:start + 8]
        if not set(window) & {"\\", '"'} and window in seen:
            return window
    return None


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_an_encoded_secret_is_masked_in_every_channel(project: Path, tmp_path: Path, kind: str) -> None:
    encoded = ENCODINGS[kind](TOKEN)
    assert leaked(encoded, encoded)  # the check can see a leak
    db = str(tmp_path / "runs.db")
    with_token = env_for(TOKEN=TOKEN)
    ran = wfops(project, "run", "encode.local", "--input", f"kind={kind}", "--json", "--db", db, env=with_token)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert MASK in result["output"]["text"], result["output"]
    text = wfops(project, "run", "encode.local", "--input", f"kind={kind}", "--db", db, env=with_token)
    assert text.returncode == 0 and MASK in text.stdout, text.stdout
    run_id = result["run_id"]
    shown = [wfops(project, *args, run_id, *fmt, "--db", db)  # TOKEN unset: only what is stored
             for args in (("runs", "trace"), ("runs", "show")) for fmt in ((), ("--json",))]
    trace = json.loads(shown[1].stdout)
    assert MASK in trace[0]["output"]["text"] and MASK in json.loads(shown[3].stdout)["state"]["text"]
    for done in (ran, text, *shown):
        assert done.returncode == 0, done.stderr
        window = leaked(encoded, done.stdout + done.stderr)
        assert window is None, f"{kind}: {window!r} of the encoded secret leaked in `{' '.join(done.args)}`"


def test_caps_call_shows_what_a_node_returns_or_raises_masked(project: Path, tmp_path: Path) -> None:
    # No run, no engine: the CLI's own output and its error line mask every declared secret.
    given = tmp_path / "in.json"
    given.write_text(json.dumps({"kind": "base64-wrapped", "token": TOKEN}))
    done = wfops(project, "caps", "call", "ops.encode", "--input-file", str(given), env=env_for(TOKEN=TOKEN))
    assert done.returncode == 0 and MASK in json.loads(done.stdout)["output"]["text"], done.stdout + done.stderr
    assert leaked(ENCODINGS["base64-wrapped"](TOKEN), done.stdout) is None
    given.write_text(json.dumps({"kind": "raise", "token": TOKEN}))
    done = wfops(project, "caps", "call", "ops.encode", "--input-file", str(given), env=env_for(TOKEN=TOKEN))
    assert done.returncode == 1 and f"refused: {MASK}" in done.stderr, done.stderr
    assert TOKEN not in done.stdout + done.stderr


def test_a_secret_given_as_input_is_refused_naming_the_secret_not_its_value(project: Path,
                                                                             tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    env = env_for(TOKEN=TOKEN)
    given = tmp_path / "input.yaml"
    given.write_text(json.dumps({"mode": {"deep": [f"Bearer {TOKEN}"]}}))
    for args, where in ((("--input", f"mode={TOKEN}"), "input `mode`"),
                        (("--input-file", str(given)), "input `mode.deep.0`")):
        done = wfops(project, "run", "encode.local", *args, "--db", db, env=env)
        assert done.returncode == 2, done.stderr
        assert f"{where} holds the value of the secret TOKEN" in done.stderr
        assert TOKEN not in done.stdout + done.stderr
    listed = wfops(project, "runs", "list", "--json", "--db", db)
    assert json.loads(listed.stdout) == []  # nothing stored: no run to show the value later

    started = wfops(project, "run", "ask.local", "--json", "--db", db, env=env)
    assert started.returncode == 3, started.stderr
    run_id = json.loads(started.stdout)["run_id"]
    done = wfops(project, "resume", run_id, "--outcome", "approved", "--payload", json.dumps({"key": TOKEN}),
                 "--db", db, env=env)
    assert done.returncode == 2 and "payload `key` holds the value of the secret TOKEN" in done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert json.loads(wfops(project, "runs", "show", run_id, "--json", "--db", db).stdout)["status"] == "interrupted"


def test_the_api_refuses_a_secret_as_input_too(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", TOKEN)
    with pytest.raises(UsageError) as refused:
        Project(project, db=tmp_path / "runs.db").run("ask.local", input={"mode": TOKEN})
    assert "input `mode` holds the value of the secret TOKEN" in refused.value.message
    assert TOKEN not in refused.value.message + (refused.value.hint or "")
