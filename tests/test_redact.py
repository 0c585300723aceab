"""The one redactor (wfops/redact.py): each encoding it promises to mask, what it leaves
alone, and the process's redactor that every channel masks with."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote, quote_plus

import pytest

from wfops.redact import MASK, Redactor, declare, declare_names, forget, mask, masked

SECRET = 'tok/"é+Z\\q mcpTok77QQzzAb\'9'
RAW = SECRET.encode()


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


ENCODED = {
    "plain": SECRET,
    "base64": base64.b64encode(RAW).decode(),
    "base64 url-safe, unpadded": base64.urlsafe_b64encode(RAW).decode().rstrip("="),
    "base64, unpadded, alone": base64.b64encode(RAW).decode().rstrip("="),
    "base64 wrapped at 76": base64.encodebytes(RAW * 3).decode(),
    "percent": quote(SECRET, safe=""),
    "percent, lower-case hex": _lower_hex(quote(SECRET, safe="")),
    "percent, form style": quote_plus(SECRET, safe=""),
    "percent twice": quote(quote(SECRET, safe=""), safe=""),
    "percent twice, lower-case hex": _lower_hex(quote(_lower_hex(quote(SECRET, safe="")), safe="")),
    "json": json.dumps(SECRET),
    "json, not ASCII-only": json.dumps(SECRET, ensure_ascii=False),
    "json twice": json.dumps(json.dumps(SECRET)),
    "json, upper-case \\u hex": json.dumps(SECRET).replace("\\u00e9", "\\u00E9"),
    "repr": repr(SECRET),
    "repr(bytes)": repr(RAW),
    "every byte as \\xNN": "".join(f"\\x{b:02x}" for b in RAW),
    "hex": RAW.hex(),
    "hex, upper-case": RAW.hex().upper(),
    "split across lines": SECRET[:12] + "\n" + SECRET[12:],
    "split across CRLF lines": SECRET[:5] + "\r\n" + SECRET[5:],
}


def _left(encoded: str, masked_text: str) -> list[str]:
    """Runs of 6 characters of `encoded` (line breaks ignored) still in `masked_text`."""
    flat = encoded.replace("\r", "").replace("\n", "")
    seen = masked_text.replace("\r", "").replace("\n", "")
    return [flat[i:i + 6] for i in range(len(flat) - 5) if flat[i:i + 6] in seen]


@pytest.mark.parametrize("kind", sorted(ENCODED))
def test_each_encoding_is_masked_embedded_in_text(kind: str) -> None:
    text = f"before {ENCODED[kind]} after"
    out = Redactor([SECRET]).text(text)
    assert MASK in out and out.startswith("before ") and out.endswith(" after"), out
    assert _left(ENCODED[kind], out) == [], out


def test_base64_of_the_secret_inside_longer_data_is_masked_at_every_alignment() -> None:
    red = Redactor([SECRET])
    for prefix in (b"", b"a", b"ab", b"abc"):
        encoded = base64.b64encode(prefix + RAW + b"tail").decode()
        out = red.text(encoded)
        assert MASK in out and len(out) < len(encoded) - 20, (prefix, out)


def test_a_wrapped_form_keeps_the_text_around_it_and_masks_the_breaks_inside_it() -> None:
    out = Redactor(["0123456789abcdef"]).text("line one\nkey: 01234567\n89abcdef\nline four")
    assert out == "line one\nkey: ***\nline four"


def test_unrelated_text_is_left_alone() -> None:
    red = Redactor([SECRET])
    text = "a plain message: 200 OK, see https://example.org/?q=a%2Fb and {\"k\": [1, 2]}\nnext line"
    assert red.text(text) == text
    assert red.redact({"n": 1, "s": text, "l": [True, None]}) == {"n": 1, "s": text, "l": [True, None]}


def test_the_whole_form_is_masked_not_a_fragment_of_it() -> None:
    red = Redactor([SECRET])
    assert red.text(json.dumps(json.dumps(SECRET))) == '"\\"***\\""'
    assert red.text(base64.b64encode(RAW).decode().rstrip("=")) == MASK


def test_a_multi_line_key_is_masked_whole_and_line_by_line() -> None:
    key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7abcdefgh\n-----END KEY-----"
    red = Redactor([key])
    assert red.text(f"x {key} y") == f"x {MASK} y"
    assert red.text("only MIIEvQIBADANBgkqhkiG9w0BAQEFAASC here") == f"only {MASK} here"
    assert red.text(key.replace("\n", "\r\n")) == MASK


@pytest.mark.no_cover  # the regex compiler is pure Python: traced, a 400,000-character pattern takes seconds
def test_many_long_secrets_compile_into_one_pattern() -> None:
    # 12 keys of 2,000 characters: 96 forms, one 400,000-character pattern; the cost grows
    # linearly with the count, and nothing in the pattern's shape changes past a few keys.
    keys = [f"sk-proj-{i:04d}-" + "Q" * 2000 for i in range(12)]
    red = Redactor(keys)
    assert red.text(f"<{keys[7]}>") == f"<{MASK}>"


def test_the_process_redactor_masks_what_was_declared() -> None:
    forget()
    assert mask(f"dying with {SECRET}") == f"dying with {SECRET}"  # nothing declared yet
    value = {"e": [f"dying with {SECRET}"]}
    assert masked(value) is value
    declare([SECRET, ""])
    assert mask(f"dying with {SECRET}") == f"dying with {MASK}"
    assert masked({"e": [base64.b64encode(RAW).decode()]}) == {"e": [MASK]}
    declare_names(["UNSET", "GIVEN"], {"GIVEN": "another-token-42"})
    assert mask(f"{SECRET} another-token-42 UNSET") == f"{MASK} {MASK} UNSET"
    forget()
    assert mask(SECRET) == SECRET
