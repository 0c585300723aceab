"""The documentation pages as the package ships them (`wfops/docs/*.md`, in a checkout a link to
`docs/`), and a search of their sections: what `wfops mcp` serves as resources and `search_docs`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

__all__ = ["Section", "page_names", "read_page", "search"]

_HEADING = re.compile(r"^(#{1,4}) +(.+?) *$", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9_$.-]+")
#: The longest section text a search returns (the page resource holds it whole).
SECTION_CHARS = 2000


@dataclass(frozen=True)
class Section:
    page: str       # e.g. "mcp"
    heading: str    # the section's heading ("" for a page's text before its first heading)
    text: str       # the section, cut to SECTION_CHARS
    score: int


def _folder() -> Traversable:
    return files("wfops") / "docs"


def page_names() -> list[str]:
    folder = _folder()
    if not folder.is_dir():
        return []
    return sorted(entry.name[:-3] for entry in folder.iterdir() if entry.name.endswith(".md"))


def read_page(name: str) -> str:
    return (_folder() / f"{name}.md").read_text(encoding="utf-8")


def search(query: str, limit: int = 5) -> list[Section]:
    """The sections whose text holds most of the query's words (a heading's words count thrice)."""
    words = [w.strip(".-") for w in _WORD.findall(query.lower()) if len(w.strip(".-")) > 1]
    if not words:
        return []
    found = []
    for page in page_names():
        for heading, text in _sections(read_page(page)):
            body, title = text.lower(), heading.lower()
            hits = [w for w in words if w in body or w in title]
            if not hits:
                continue
            score = sum(body.count(w) + 3 * title.count(w) for w in hits) + 10 * len(hits)
            found.append(Section(page, heading, text[:SECTION_CHARS], score))
    found.sort(key=lambda s: (-s.score, s.page, s.heading))
    return found[:max(1, limit)]


def _sections(text: str) -> list[tuple[str, str]]:
    out = []
    marks = list(_HEADING.finditer(text))
    if marks and marks[0].start() > 0:
        out.append(("", text[:marks[0].start()].strip()))
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        out.append((mark.group(2), text[mark.start():end].strip()))
    return [(h, t) for h, t in out if t]
