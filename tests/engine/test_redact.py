from __future__ import annotations

import base64
import json
from urllib.parse import quote

from wfops.errors import CapabilityError
from wfops.redact import MASK, Redactor

from .helpers import make_engine, run

SECRET = "s3cr3t/t0ken+value=="


def test_redactor_masks_plain_base64_and_url_forms_even_embedded() -> None:
    red = Redactor([SECRET])
    basic = base64.b64encode(f"user:{SECRET}".encode()).decode()
    for text in (SECRET, f"Bearer {SECRET}", base64.b64encode(SECRET.encode()).decode(),
                 base64.urlsafe_b64encode(SECRET.encode()).decode(), quote(SECRET, safe=""),
                 f"https://x/?t={quote(SECRET, safe='')}&a=1", basic, f"x{basic}y"):
        masked = red.redact({"k": [text]})["k"][0]
        assert SECRET not in masked and MASK in masked, text
        # nothing decodable back to the secret is left
        assert quote(SECRET, safe="") not in masked
    assert red.redact({"n": 1, "s": "harmless"}) == {"n": 1, "s": "harmless"}


def test_no_secrets_means_no_copy() -> None:
    value = {"a": [1]}
    assert Redactor([]).redact(value) is value


def test_secrets_never_reach_the_sink_but_reach_the_capability() -> None:
    wf = {"name": "sec", "state": {"echo": {}, "err": {}},
          "output": {"echo": "$state.echo", "err": "$state.err", "b64": "$state.b64"},
          "steps": [
              {"id": "use", "uses": "t.leak", "with": {"token": "$secret.TOKEN"}, "save": "state.echo",
               "next": "boom"},
              {"id": "boom", "uses": "t.boom", "with": {"token": "$secret.TOKEN"},
               "catch": {"next": "ask", "save": "state.err"}, "next": "ask"},
              {"id": "ask", "interrupt": "approval", "request": {"t": "$secret.TOKEN"}, "on": {"ok": "end"}},
          ]}
    engine, source, sink = make_engine([wf], secrets={"TOKEN": SECRET})
    source.add("leak", lambda p, c: {"plain": p["token"],
                                     "b64": base64.b64encode(p["token"].encode()).decode(),
                                     "url": quote(p["token"], safe="")})

    def boom(p, c):
        raise CapabilityError(f"denied for {p['token']}")

    source.add("boom", boom)
    snap = run(engine.start("sec", {}))
    assert source.called("leak")[0][0] == {"token": SECRET}  # the real value for the call
    assert snap.status == "interrupted" and snap.interrupt.request == {"t": MASK}
    stored = json.dumps([[s.to_public(), s.cursor, [e.to_dict() for e in es]] for s, es in sink.commits])
    for form in (SECRET, base64.b64encode(SECRET.encode()).decode(), quote(SECRET, safe="")):
        assert form not in stored
    assert '"input": {"token": "***"}' in stored and "denied for ***" in stored
