"""Store locations: a SQLite file path, or a PostgreSQL connection URL.

A URL may carry a password. It must never reach an output, a log, an error or a
trace, so everything that shows a store location or a driver's message goes
through `redact` (the one owner of that rule).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

SCHEMES = ("postgresql://", "postgres://")
HIDDEN = "***"

# userinfo of a URL: scheme://user:PASSWORD@host
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/?#@\s]*:)(?P<secret>[^@/\s]*)@")
# conninfo keyword form and URL query parameters: password=... / password='...'
_KEYWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|[^\s&'\"]+)", re.IGNORECASE)


def is_url(location: str | Path | None) -> bool:
    """True for a PostgreSQL connection URL (`postgresql://...` or `postgres://...`)."""
    return isinstance(location, str) and location.lower().startswith(SCHEMES)


def location_of(text: str | Path) -> str | Path:
    """A `--db` / `WFOPS_DB` value as the store wants it: URLs stay text, anything else is a path."""
    return text if is_url(text) else Path(text)


def passwords_in(url: str) -> list[str]:
    """The password(s) a URL carries, raw and percent-decoded (libpq echoes either)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        raw = parts.password
    except ValueError:
        raw = None
    if raw:
        found += [raw, unquote(raw)]
    for match in _KEYWORD.finditer(url):
        secret = match.group("secret").strip("'")
        found += [secret, unquote(secret)]
    return sorted({p for p in found if p}, key=len, reverse=True)


def redact(text: str, url: str | None = None) -> str:
    """`text` with every password hidden: URL userinfo, `password=` keywords, $PGPASSWORD
    and, when `url` is given, any verbatim occurrence of the password it carries."""
    out = _URL_PASSWORD.sub(lambda m: m.group("head") + HIDDEN + "@", text)
    out = _KEYWORD.sub(lambda m: m.group("head") + HIDDEN, out)
    secrets = passwords_in(url) if url else []
    from_env = os.environ.get("PGPASSWORD", "")
    if len(from_env) >= 4:  # a shorter one would blank out ordinary words
        secrets.append(from_env)
    for secret in sorted(secrets, key=len, reverse=True):
        out = out.replace(secret, HIDDEN)
    return out


def display(location: str | Path) -> str:
    """How messages name a store: the path, or the URL without its password."""
    return redact(str(location), str(location)) if is_url(location) else str(location)
