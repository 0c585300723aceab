"""The one redactor: secret values, and the encodings of them that leak, replaced with "***".

Two users share it (docs/trust-model.md, "What the redactor covers"):

- a run's engine masks everything it hands to its sink (trace entries, the stored run)
  with a `Redactor` of that run's secrets;
- every channel that shows text wfops did not write (a server's stderr, exception text,
  HTTP bodies, tool results) masks it with the process's redactor (`mask`, `masked`): the
  secrets this process was told of with `declare`, which are the secrets of the runs it
  drives and, in every command that builds a project's sources, every secret any
  deployment lists, as the environment holds them then.

The encoded forms of each secret are computed once and matched in one pass of one compiled
pattern; text with line breaks is matched with them removed, so a secret split across
lines (base64 wrapped at 76 characters, say) is masked too.
"""

from __future__ import annotations

import base64
import itertools
import json
import operator
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"
_MIN_FORM = 4  # shorter encoded fragments would mask unrelated text
_MIN_LINE = 8  # a line of a multi-line secret shorter than this is too common to mask
_BREAKS = re.compile(r"[\r\n]")
# Hex escapes, whose digits encoders write in either case (%2f or %2F, \xe9 or \xE9, \u00e9 or \u00E9).
_HEX_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}")


def _b64_cores(raw: bytes) -> set[str]:
    """The base64 (standard and URL-safe) of `raw` whole, padded or not, and, for `raw` embedded in longer
    data at each of the three byte alignments, the characters that depend on `raw` alone."""
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for shift in range(3):
            encoded = encode(b"\0" * shift + raw).decode("ascii")
            start = -(-8 * shift // 6)  # first char made of secret bits only
            stop = (8 * (shift + len(raw))) // 6  # chars fully inside the secret
            core = encoded[start:stop]
            if len(core) >= _MIN_FORM:
                forms.add(core)
        whole = encode(raw).decode("ascii")
        forms |= {whole, whole.rstrip("=")}
    return forms


def _escaped(text: str) -> set[str]:
    """`text` as it reads inside a quoted string of a message: Python's repr (what schema
    errors quote), with and without escaped quotes, JSON's (ASCII-only or not), and JSON's
    applied twice (a JSON document carried as a string of another)."""
    forms = {repr(text)[1:-1], repr(text + "'\"")[1:-4]}  # the second: both quotes present, ' escaped
    once = {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    forms |= once | {json.dumps(form)[1:-1] for form in once}
    return forms


def _url_forms(text: str) -> set[str]:
    """Percent-encodings of `text`: path and form style, upper- and lower-case hex, once and twice."""
    once = {quote(text, safe=""), quote_plus(text, safe=""), quote(text)}
    once |= {_hex_case(form, str.lower) for form in once}
    return once | {quote(form, safe="") for form in once}


def _bytes_forms(raw: bytes) -> set[str]:
    """`raw` as Python shows bytes (`repr(b"...")`, non-ASCII as \\xNN), every byte as \\xNN, and hex."""
    return {repr(raw)[2:-1], "".join(f"\\x{b:02x}" for b in raw), raw.hex(), raw.hex().upper()}


def _hex_case(form: str, case: Callable[[str], str]) -> str:
    """`form` with the hex digits of its escapes put in `case` (str.upper or str.lower)."""
    def digits(match: re.Match[str]) -> str:
        escape = match[0]
        width = 4 if escape.startswith("\\u") else 2
        return escape[:-width] + case(escape[-width:])
    return _HEX_ESCAPE.sub(digits, form)


def forms_of(secret: str) -> set[str]:
    """The secret and the encodings of it that could leak into logs and outputs."""
    raw = secret.encode("utf-8")
    forms = {secret, _BREAKS.sub("", secret)}
    forms |= _url_forms(secret) | _escaped(secret) | _bytes_forms(raw) | _b64_cores(raw)
    lines = secret.splitlines()
    if len(lines) > 1:  # a PEM block: each line may be printed, logged or cut apart on its own
        for line in lines:
            if len(line.strip()) >= _MIN_LINE:
                forms |= {line, line.strip()} | _escaped(line)
    forms |= {_hex_case(form, case) for form in forms for case in (str.upper, str.lower)}
    return {form for form in forms if len(form) >= _MIN_FORM} | ({secret} if secret else set())


def _pattern_of(forms: list[str]) -> re.Pattern[str]:
    """One pattern matching every form, the longest where several start at one place (so a
    whole encoded secret is masked, not a fragment of it). The forms share long prefixes (the
    secret and its escaped and encoded variants), so they are matched as a prefix tree: one
    test per character instead of one per form (Python's regex engine tries alternatives one
    by one), each run of characters without a branch written as one literal."""
    try:
        return re.compile(_tree(sorted(set(forms))))
    except (RecursionError, OverflowError):  # a tree too deep for the regex parser: the plain alternation
        return re.compile("|".join(map(re.escape, forms)))


def _tree(forms: list[str]) -> str:
    """The pattern of the sorted, distinct `forms` ("" among them: one may end here)."""
    ends = forms[0] == ""
    branches = []
    for _, group in itertools.groupby(forms[1:] if ends else forms, key=operator.itemgetter(0)):
        same = list(group)
        prefix = os.path.commonprefix(same)
        rest = [form[len(prefix):] for form in same]
        branches.append(re.escape(prefix) + ("" if rest == [""] else _tree(rest)))
    if ends:
        return f"(?:{'|'.join(branches)})?" if branches else ""
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


class Redactor:
    """Masks every form of the given secrets; built once per run (or per declaration), used per value."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= forms_of(secret)
        self.forms = sorted(forms, key=lambda form: (-len(form), form))
        self.active = bool(self.forms)
        self._pattern = _pattern_of(self.forms) if self.active else None
        self._shortest = len(self.forms[-1]) if self.active else 0  # shorter text holds no form

    def text(self, value: str) -> str:
        pattern = self._pattern
        if pattern is None or len(value) < self._shortest:
            return value
        if "\n" not in value and "\r" not in value:
            return pattern.sub(MASK, value)
        return self._across_breaks(pattern, value)

    @staticmethod
    def _across_breaks(pattern: re.Pattern[str], value: str) -> str:
        """Text with line breaks is matched with its breaks removed, so a form they cut apart
        (base64 wrapped at 76 characters, a token split over two lines) is found too; each
        match masks the span of the original it covers, breaks inside it included."""
        joined = value.replace("\r", "").replace("\n", "")
        if pattern.search(joined) is None:
            return value
        kept = [i for i, char in enumerate(value) if char not in "\r\n"]  # joined index -> value index
        out: list[str] = []
        done = 0
        for match in pattern.finditer(joined):
            start, end = kept[match.start()], kept[match.end() - 1] + 1
            out += [value[done:start], MASK]
            done = end
        out.append(value[done:])
        return "".join(out)

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


# -- the process's redactor ------------------------------------------------------------

_declared: set[str] = set()
_process = Redactor(())
_declaring = threading.Lock()  # `wfops mcp` runs tools, and so declarations, in worker threads


def declare(values: Iterable[str]) -> None:
    """Add secret values to what this process masks in every channel (never removed: a
    value once declared stays masked for the rest of the process)."""
    global _process
    with _declaring:
        new = {value for value in values if value} - _declared
        if new:
            _declared.update(new)
            _process = Redactor(_declared)


def declare_names(names: Iterable[str], environ: Mapping[str, str] | None = None) -> None:
    """Declare the values the environment holds now for the variables `names` (unset ones are skipped)."""
    env = os.environ if environ is None else environ
    declare(env[name] for name in names if env.get(name))


def forget() -> None:
    """Forget every declared secret: for a process that runs commands one after another for
    unrelated projects (the test harness), so one command's secrets do not mask the next's text."""
    global _process
    with _declaring:
        _declared.clear()
        _process = Redactor(())


def mask(text: str) -> str:
    """`text` with every form of every declared secret masked."""
    return _process.text(text)


def masked(value: Any) -> Any:
    """A copy of a JSON-like `value` with every declared secret masked (itself when none is declared)."""
    return _process.redact(value)
