"""Replace secret values -- and their base64 and URL-encoded forms -- with "***".

Everything the engine hands to its sink passes through `Redactor.redact`. A secret
embedded in a longer string is base64-encoded at one of three byte alignments, so
the characters that depend only on the secret are computed for each alignment.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"
_MIN_FORM = 4  # shorter encoded fragments would mask unrelated text


def _b64_cores(raw: bytes) -> set[str]:
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for shift in range(3):
            encoded = encode(b"\0" * shift + raw).decode("ascii")
            start = -(-8 * shift // 6)  # first char made of secret bits only
            stop = (8 * (shift + len(raw))) // 6  # chars fully inside the secret
            core = encoded[start:stop]
            if len(core) >= _MIN_FORM:
                forms.add(core)
        forms.add(encode(raw).decode("ascii"))
    return forms


_MIN_LINE = 8  # a line of a multi-line secret shorter than this is too common to mask


def _escaped(text: str) -> set[str]:
    """`text` as it reads inside a quoted string of a message: Python's repr (what schema
    errors quote), with and without escaped quotes, and JSON's (ASCII-only or not)."""
    forms = {repr(text)[1:-1], repr(text + "'\"")[1:-4]}  # the second: both quotes present, ' escaped
    forms |= {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    return forms


def forms_of(secret: str) -> set[str]:
    """The secret and the encodings of it that could leak into logs and outputs."""
    raw = secret.encode("utf-8")
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe=""), quote(secret)}
    forms |= _escaped(secret)
    forms |= _b64_cores(raw)
    lines = secret.splitlines()
    if len(lines) > 1:  # a PEM block: each line may be printed, logged or cut apart on its own
        for line in lines:
            if len(line.strip()) >= _MIN_LINE:
                forms |= {line, line.strip()} | _escaped(line)
    return {form for form in forms if form}


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= forms_of(secret)
        # Longest first so a whole encoded secret is masked before any fragment of it.
        self.forms = sorted(forms, key=len, reverse=True)
        self.active = bool(self.forms)

    def text(self, value: str) -> str:
        for form in self.forms:
            if form in value:
                value = value.replace(form, MASK)
        return value

    def redact(self, value: Any) -> Any:
        """A copy of `value` with every secret form masked (the value itself when there are no secrets)."""
        if not self.active:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._walk(k) if isinstance(k, str) else k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(item) for item in value]
        return value
