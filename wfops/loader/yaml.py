"""The one YAML loader for every file wfops reads.

It builds plain JSON-like data straight from the parser's event stream (the C
parser when available), so it never recurses, never expands aliases and never
constructs objects from tags. Every value's and key's position is recorded as it
goes (compactly, see `Document`), which is what lets any later check point at file:line:col.

Anything hostile or broken raises `YamlLoadError` carrying one `Diagnostic`.
"""

from __future__ import annotations

import codecs
import math
import re
import stat
import sys
import zlib
from array import array
from collections.abc import Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml import events as ev
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.main import CParser  # type: ignore[attr-defined]  # None without ruamel.yaml.clib
from ruamel.yaml.reader import ReaderError

from wfops.diagnostics import Diagnostic, error
from wfops.jsonvalues import MAX_INT_DIGITS, described, number_problem

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_SCALAR_CHARS = 64 * 1024
MAX_DEPTH = 64
MAX_NODES = 500_000

Position = tuple[int, int]
PathKey = tuple[str | int, ...]

_STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


class YamlLoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class Document:
    """Loaded data plus where each part of it stands in the file (1-based).

    Positions are only needed to report a finding, and a table of them keyed by path costs
    more memory than the data itself (a project of 3,000 workflows held ~275 MB of them). So
    the loader keeps only each node's (line, column) in the order the parser met them,
    packed and compressed. A position is found by walking the data (which holds the nodes in
    that same order) to its node; a document asked for many builds the path tables once
    (`positions`, `key_positions`). None is ever parsed twice."""

    def __init__(self, file: str, data: Any, positions: dict[PathKey, Position] | None = None,
                 key_positions: dict[PathKey, Position] | None = None) -> None:
        self.file = file
        self.data = data
        self._positions = positions
        self._key_positions = key_positions
        self._marks: bytes | None = None  # what the tables are made from, until they are (`_Builder.build`)
        self._lookups = 0

    @property
    def positions(self) -> dict[PathKey, Position]:
        if self._positions is None:
            self._locate()
        assert self._positions is not None
        return self._positions

    @property
    def key_positions(self) -> dict[PathKey, Position]:
        if self._key_positions is None:
            self._locate()
        assert self._key_positions is not None
        return self._key_positions

    def _locate(self) -> None:
        marks = self._unpacked()
        self._marks = None
        self._positions, self._key_positions = {}, {}
        if marks is not None:
            _Tables(self._positions, self._key_positions, marks).walk((), self.data)

    def _unpacked(self) -> array[int] | None:
        if self._marks is None:
            return None
        marks = array("I")
        marks.frombytes(zlib.decompress(self._marks, _RAW_DEFLATE))
        return marks

    def at(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        """Position of the deepest node on `path` that exists (the key itself if `key`: the
        deepest mapping key on it)."""
        parts = tuple(path)
        if self._positions is None and self._lookups < _LOOKUPS_BEFORE_TABLES:
            # A file reported on a few times (a warning in each of 3,000 files) is walked
            # for each, and never keeps the tables (~100 KB per file).
            self._lookups += 1
            marks = self._unpacked()
            if marks is not None:
                return _one_position(self.data, parts, key, marks)
        positions, key_positions = self.positions, self.key_positions
        while parts:
            table = key_positions if key else positions
            if parts in table:
                return table[parts]
            if key is False and parts in key_positions:
                return key_positions[parts]
            parts = parts[:-1]
        return positions.get((), (1, 1))


#: Lookups on one document answered by walking its data before it keeps path tables.
_LOOKUPS_BEFORE_TABLES = 16


def _size(nodes: list[Any]) -> int:
    """How many marks some nodes and everything under them hold (a key has one of its own).
    A loop, not a recursion: a finding's position walks past every node before it."""
    count = 0
    pending = list(nodes)
    while pending:
        node = pending.pop()
        count += 1
        if node.__class__ is dict:
            count += len(node)
            pending.extend(node.values())
        elif node.__class__ is list:
            pending.extend(node)
    return count


def _one_position(data: Any, parts: PathKey, key: bool, marks: array[int]) -> Position:
    """What the path tables would answer for `parts`, from a walk of the data to it."""
    index = 0  # the mark of `node`
    node = data
    found: list[tuple[int, int | None]] = []  # (value mark, key mark) of each prefix that exists
    for part in parts:
        if node.__class__ is dict:
            if part.__class__ is not str or part not in node:
                break
            index += 1
            for name, value in node.items():
                if name == part:
                    found.append((index + 1, index))
                    index, node = index + 1, value
                    break
                index += 1 + _size([value])
        elif node.__class__ is list:
            if not isinstance(part, int) or not 0 <= part < len(node):
                break
            index += 1 + _size(node[:part])
            found.append((index, None))
            node = node[part]
        else:
            break
    chosen = 0  # the root's mark
    for value_mark, key_mark in reversed(found):
        if not key:
            chosen = value_mark
            break
        if key_mark is not None:
            chosen = key_mark
            break
    return (marks[2 * chosen] + 1, marks[2 * chosen + 1] + 1)


class _Tables:
    """The path tables from the marks: the data walked in document order (a mapping's keys
    in insertion order, each key's mark before its value's) meets the nodes in the order
    the parser did."""

    def __init__(self, positions: dict[PathKey, Position], keys: dict[PathKey, Position], marks: array[int]) -> None:
        self.positions, self.keys, self.marks, self.next = positions, keys, marks, 0

    def _mark(self) -> Position:
        i, self.next = self.next, self.next + 2
        return (self.marks[i] + 1, self.marks[i + 1] + 1)

    def walk(self, path: PathKey, node: Any) -> None:
        self.positions[path] = self._mark()
        if node.__class__ is dict:
            for key, value in node.items():
                inner = (*path, key)
                self.keys[inner] = self._mark()
                self.walk(inner, value)
        elif node.__class__ is list:
            for index, value in enumerate(node):
                self.walk((*path, index), value)


def load_yaml_file(path: Path, display: str | None = None) -> Document:
    shown = display or str(path)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(str(path))
        if not stat.S_ISREG(info.st_mode):
            # A FIFO or a device (a symlink to /dev/zero) would block or never end.
            raise YamlLoadError(error("file-unreadable", f"{shown} is not a regular file", shown,
                                      hint="point wfops at a plain YAML file"))
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(info.st_size, shown)
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)  # the file may grow after stat()
    except FileNotFoundError:
        raise YamlLoadError(error("file-missing", f"{shown} does not exist", shown,
                                  hint="check the path, or create the file")) from None
    except IsADirectoryError:
        raise YamlLoadError(error("file-missing", f"{shown} is a directory, not a YAML file", shown)) from None
    except OSError as exc:
        raise YamlLoadError(error("file-unreadable", f"cannot read {shown}: {exc.strerror}", shown)) from None
    return load_yaml_bytes(raw, shown)


def _too_large(size: int, file: str) -> YamlLoadError:
    return YamlLoadError(error(
        "yaml-too-large", f"file is {size} bytes; wfops reads files up to {MAX_FILE_BYTES} bytes",
        file, hint="split the file, or move large data out of YAML"))


_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def load_yaml_bytes(raw: bytes, file: str) -> Document:
    if len(raw) > MAX_FILE_BYTES:
        raise _too_large(len(raw), file)
    for bom, name in _WIDE_BOMS:
        if raw.startswith(bom):
            raise YamlLoadError(error("yaml-encoding", f"the file is {name}-encoded; wfops reads UTF-8",
                                      file, hint="save the file as UTF-8"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = len(raw[raw.rfind(b"\n", 0, exc.start) + 1: exc.start].decode("utf-8", "replace")) + 1
        raise YamlLoadError(error(
            "yaml-encoding", f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", file, (line, column),
            hint="save the file as UTF-8")) from None
    return load_yaml_text(text, file)


def load_yaml_text(text: str, file: str) -> Document:
    # Encoding finds an unpaired surrogate too, the only character UTF-8 cannot hold (a regex
    # search for one cost more than parsing a short file), and gives the size.
    surrogate: int | None = None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        surrogate = exc.start
        size = len(text.encode("utf-8", "surrogatepass"))
    if len(text) > MAX_FILE_BYTES or size > MAX_FILE_BYTES:
        raise YamlLoadError(error("yaml-too-large", f"text is larger than {MAX_FILE_BYTES} bytes", file,
                                  hint="split the file, or move large data out of YAML"))
    if "\x00" in text:
        raise YamlLoadError(error("yaml-encoding", "the file contains a NUL byte", file,
                                  _text_position(text, text.index("\x00")),
                                  hint="YAML files are text; remove the binary content"))
    if surrogate is not None:
        raise YamlLoadError(error("yaml-encoding", "the text holds an unpaired UTF-16 surrogate", file,
                                  _text_position(text, surrogate), hint="save the file as UTF-8"))
    return _Builder(file).build(text)


def _text_position(text: str, index: int) -> Position:
    """1-based line and column of a character index, counting line breaks as YAML does."""
    before = text[:index]
    breaks = [m.end() for m in re.finditer("\r\n|\r|\n", before)]  # only for a finding: compiled then
    start = breaks[-1] if breaks else 0
    return (len(breaks) + 1, index - start + 1)



def _short(value: str, limit: int = 40) -> str:
    """A scalar quoted for a message, cut so a huge value cannot flood the output."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"... ({len(value)} characters)"


def _pos(mark: Any) -> Position:
    return (mark.line + 1, mark.column + 1)


class _Builder:
    """The data of one document, and the marks its positions are made from (see `Document`)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.doc = Document(file, None)
        # Each node's 0-based line and column, in the order the parser met them (keys included).
        self.marks = array("I")

    def fail(self, code: str, message: str, mark: Any = None, hint: str | None = None) -> None:
        at = _pos(mark) if mark is not None else (1, 1)
        raise YamlLoadError(error(code, message, self.file, at, hint))

    def build(self, text: str) -> Document:
        # The C parser's events, taken straight from it: a `YAML` object would build a loader
        # class, a constructor and a resolver for each file, none of which an event stream
        # uses, and a generator between would cost a call per event.
        parser = None
        try:
            if CParser is None:
                self._consume(YAML(typ="safe").parse(text))
            else:
                parser = CParser(text)
                self._consume(iter(parser.get_event, None))  # None once the stream has ended
        except YamlLoadError:
            raise
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "invalid YAML"
            if mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t":
                self.fail("yaml-tab", "a tab character is used where YAML allows only spaces", mark,
                          hint="indent with spaces, never tabs")
            self.fail("yaml-syntax", f"invalid YAML: {str(problem).splitlines()[0]}", mark,
                      hint="fix the YAML syntax at this position (check indentation, quotes and colons)")
        except ReaderError as exc:
            at = _text_position(text, exc.position) if isinstance(exc.position, int) else (1, 1)
            code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
            raise YamlLoadError(error(
                "yaml-encoding", f"character U+{code:04X} is not allowed in YAML ({exc.reason})",
                self.file, at, hint="remove the control character; YAML files are printable text")) from None
        except YAMLError as exc:
            self.fail("yaml-syntax", f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else 'unreadable'}")
        except RecursionError:
            self.fail("yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
        finally:
            if parser is not None:
                parser.dispose()
        doc = self.doc
        if doc.data is None:
            self.fail("yaml-empty", "the file holds no YAML document",
                      hint="write a mapping at the top level, e.g. `name: ...`")
        if not isinstance(doc.data, dict):
            self.fail("yaml-not-mapping", f"the top level must be a mapping, not {described(doc.data)}",
                      None, hint="start the file with `key: value` lines")
        # Line numbers grow slowly and columns repeat: compressed, the marks take about a
        # tenth of their packed size.
        packer = zlib.compressobj(1, zlib.DEFLATED, _RAW_DEFLATE)  # raw: no header or checksum to make
        doc._marks = packer.compress(self.marks) + packer.flush()
        return doc

    def _consume(self, events: Any) -> None:
        # Local names: this loop runs once per event, up to MAX_NODES times.
        scalar_event, map_start, seq_start = ev.ScalarEvent, ev.MappingStartEvent, ev.SequenceStartEvent
        map_end, seq_end = ev.MappingEndEvent, ev.SequenceEndEvent
        tag_of = _TAG_OF
        mark = self.marks.append
        intern = sys.intern
        # The collection being filled and where its next value goes: under `key` in a mapping
        # (_NO_KEY while it waits for a key), appended (_ITEM), or the document itself (_ROOT).
        # `stack` holds the same pair of each collection that encloses it.
        stack: list[tuple[Any, Any]] = []
        container: Any = None
        key: Any = _ROOT
        documents = 0
        nodes = 0
        for event in events:
            kind = type(event)
            if kind is scalar_event:
                nodes += 1
                if nodes > MAX_NODES:
                    self._too_many(event)
                if event.anchor is not None:
                    self._anchored(event)
                tag = tag_of(event)
                if tag is not None:
                    self._check_tag(event)
                start = event.start_mark
                mark(start.line)
                mark(start.column)
                text = event.value
                if len(text) > MAX_SCALAR_CHARS:
                    self.fail("yaml-too-large", f"a scalar is longer than {MAX_SCALAR_CHARS} characters",
                              event.start_mark, hint="move large data out of YAML")
                if key is _NO_KEY:
                    if text == "<<" or text in container:  # a merge or duplicate key, maybe: say which
                        self._check_key(container, event)
                    # Keys repeat across every step of every file: one string object per distinct key.
                    key = text if len(text) > _INTERNED else intern(text)
                    continue
                if tag is None and (event.style or text and text[0] not in _NON_STR_START):
                    # quoted, or plain text that no other core-schema type starts with
                    value = text if len(text) > _INTERNED else intern(text)  # refs, ids and outcomes repeat
                else:
                    value = self._scalar(event)
                    if value.__class__ is str and len(value) <= _INTERNED:
                        value = intern(value)
                if key is _ITEM:
                    container.append(value)
                elif key is _ROOT:
                    self._root(value, event)
                else:
                    container[key] = value
                    key = _NO_KEY
            elif kind is map_start or kind is seq_start:
                nodes += 1
                if nodes > MAX_NODES:
                    self._too_many(event)
                if event.anchor is not None:
                    self._anchored(event)
                if tag_of(event) is not None:
                    self._check_tag(event)
                start = event.start_mark
                mark(start.line)
                mark(start.column)
                if key is _NO_KEY:
                    self.fail("yaml-key-type", "a mapping key must be a plain scalar, not a collection",
                              event.start_mark, hint="use a string key")
                if len(stack) >= MAX_DEPTH:
                    self.fail("yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels", event.start_mark,
                              hint="flatten the structure")
                inner: dict[str, Any] | list[Any] = {} if kind is map_start else []
                if key is _ITEM:
                    container.append(inner)
                    stack.append((container, _ITEM))
                elif key is _ROOT:
                    self._root(inner, event)
                    stack.append((None, _ROOT))
                else:
                    container[key] = inner
                    stack.append((container, _NO_KEY))
                container, key = inner, (_NO_KEY if kind is map_start else _ITEM)
            elif kind is map_end or kind is seq_end:
                container, key = stack.pop()
            elif kind is ev.AliasEvent:
                self.fail("yaml-alias", f"aliases (*{event.anchor}) are not allowed in wfops files",
                          event.start_mark, hint="write the value out in full where it is used")
            elif kind is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    self.fail("yaml-multiple-documents", "the file holds more than one YAML document",
                              event.start_mark, hint="keep one document per file; remove the `---` separator")
                version = getattr(event, "version", None)
                if version is not None and tuple(version) != (1, 2):
                    self.fail("yaml-version", f"YAML {version[0]}.{version[1]} is not supported; wfops reads YAML 1.2",
                              event.start_mark, hint="remove the %YAML directive")
                if getattr(event, "tags", None):
                    self.fail("yaml-tag", "%TAG directives are not allowed", event.start_mark,
                              hint="remove the %TAG directive; wfops files hold plain data only")

    def _too_many(self, event: Any) -> None:
        self.fail("yaml-too-large", f"the document has more than {MAX_NODES} nodes", event.start_mark,
                  hint="split the file, or move large data out of YAML")

    def _anchored(self, event: Any) -> None:
        self.fail("yaml-anchor", f"anchors (&{event.anchor}) are not allowed in wfops files",
                  event.start_mark, hint="write the value out in full where it is used")

    def _check_tag(self, event: Any) -> None:
        """Only the core schema's tags, and only on the kind of node they name."""
        tag = event.tag
        if tag is None or tag == "!":
            return

        if tag not in _STANDARD_TAGS:
            shown = "!!" + tag[len(_CORE_PREFIX):] if tag.startswith(_CORE_PREFIX) else tag
            self.fail("yaml-tag", f"the tag {_short(shown, 60)} is not allowed in wfops files", event.start_mark,
                      hint="remove the tag; wfops files hold plain data only")
        kind = type(event)
        expected = (_MAP_TAG if kind is ev.MappingStartEvent else _SEQ_TAG if kind is ev.SequenceStartEvent
                    else None)
        if (expected is not None and tag != expected) or (expected is None and tag in (_MAP_TAG, _SEQ_TAG)):
            node = "mapping" if expected == _MAP_TAG else "list" if expected == _SEQ_TAG else "scalar"
            self.fail("yaml-tag", f"the tag !!{tag.rsplit(':', 1)[-1]} does not fit a {node}", event.start_mark,
                      hint="remove the tag; wfops files hold plain data only")

    def _check_key(self, mapping: dict[str, Any], event: Any) -> None:
        key = event.value
        if key == "<<" and event.tag is None and not event.style:
            self.fail("yaml-merge-key", "merge keys (<<) are not allowed in wfops files", event.start_mark,
                      hint="write the merged keys out in full")
        # Every earlier key's value is placed before the next key comes: the mapping holds them all.
        if key in mapping:
            self.fail("yaml-duplicate-key", f"duplicate key {key!r}", event.start_mark,
                      hint="remove or rename one of the two entries")

    def _root(self, value: Any, event: Any) -> None:
        if self.doc.data is not None:
            self.fail("yaml-multiple-documents", "the file holds more than one YAML document", event.start_mark)
        self.doc.data = value

    def _scalar(self, event: Any) -> Any:
        value = event.value
        tag = event.tag
        explicit = tag is not None and tag != "!"
        if not explicit:
            if event.style or tag == "!":
                return value
            tag = _resolve_plain(value)  # the tag whose pattern the text matches
        if tag == _STR_TAG:
            return value
        kind = tag.rsplit(":", 1)[-1]
        if explicit and not _is_core(tag, value):  # an explicit tag on the wrong text: `!!int abc`
            self.fail("yaml-tag", f"{_short(value)} is not a valid {kind}", event.start_mark,
                      hint=f"fix the value, or remove the !!{kind} tag")
        if kind == "int" and len(value) > MAX_INT_DIGITS:
            self.fail("yaml-invalid-number", f"an integer with {len(value)} digits is too long",
                      event.start_mark, hint=f"use at most {MAX_INT_DIGITS} digits, or quote it")
        result = _convert(kind, value)
        if kind == "int" and number_problem(result) is not None:  # `0x` and 4,000 hex digits
            self.fail("yaml-invalid-number", f"an integer of more than {MAX_INT_DIGITS} decimal digits is too "
                      "long", event.start_mark, hint=f"use at most {MAX_INT_DIGITS} digits, or quote it")
        if isinstance(result, float) and not math.isfinite(result):
            self.fail("yaml-invalid-number", f"{_short(value)} is not a finite number; JSON cannot hold it",
                      event.start_mark, hint="use a finite number, or quote it to make it a string")
        return result


#: The marks are deflated without zlib's header and checksum (negative window bits): ~20% less
#: CPU for a file's few kilobytes, and nothing reads them but `Document`.
_RAW_DEFLATE = -15
_NO_KEY = object()
_ITEM = object()
_ROOT = object()
#: Strings up to this long are interned as they are loaded (see `_consume`).
_INTERNED = 64
#: An event's tag, read without a call: ruamel keeps it in the `ctag` slot and serves `tag` as
#: a property (a Python call for each of a file's nodes). `None` in both when there is none.
_TAG_OF = attrgetter("ctag" if "ctag" in ev.ScalarEvent.__slots__ and "ctag" in ev.CollectionStartEvent.__slots__
                     else "tag")


_CORE_PREFIX = "tag:yaml.org,2002:"
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"

# The YAML 1.2 core schema, in the order it resolves a plain scalar. Null and bool are a few
# words (a set lookup); the number patterns are compiled when a scalar first needs them (a
# regex costs start-up time, and `wfops validate` starts cold on every fresh clone).
_NULL_TAG = "tag:yaml.org,2002:null"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_WORDS = frozenset({"~", "null", "Null", "NULL", ""})
_BOOL_WORDS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_CORE_WORDS = {_NULL_TAG: _NULL_WORDS, _BOOL_TAG: _BOOL_WORDS}
_CORE_NUMBERS = {
    "tag:yaml.org,2002:int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "tag:yaml.org,2002:float":
        r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)",
}
_CORE_TAGS = (*_CORE_WORDS, *_CORE_NUMBERS)


def _is_core(tag: str, value: str) -> bool:
    """Whether `value` is written as the core schema's `tag` (null, bool, int or float) writes it."""
    words = _CORE_WORDS.get(tag)
    if words is not None:
        return value in words
    pattern = _NUMBER_PATTERNS.get(tag)
    if pattern is None:
        pattern = _NUMBER_PATTERNS[tag] = re.compile(_CORE_NUMBERS[tag])
    return pattern.fullmatch(value) is not None


#: The number patterns, compiled when a scalar first needs them.
_NUMBER_PATTERNS: dict[str, re.Pattern[str]] = {}
_NON_STR_START = frozenset("~nNtTfF+-.0123456789")
#: Only a number starts so: a scalar that starts otherwise is null, a bool or a string.
_NUMBER_START = frozenset("+-.0123456789")


def _resolve_plain(value: str) -> str:
    """The YAML 1.2 core schema: `on`, `yes` and dates stay strings."""
    if value and value[0] not in _NUMBER_START:  # a word: no pattern can match it
        return _NULL_TAG if value in _NULL_WORDS else _BOOL_TAG if value in _BOOL_WORDS else _STR_TAG
    for tag in _CORE_TAGS:
        if _is_core(tag, value):
            return tag
    return _STR_TAG


def _convert(kind: str, value: str) -> Any:
    """A plain or explicitly tagged scalar that already matched its core-schema pattern."""
    if kind == "null":
        return None
    if kind == "bool":
        return value.lower() == "true"
    if kind == "int":
        try:
            return int(value, 0)
        except ValueError:
            return int(value, 10)  # leading zeros: YAML 1.2 reads 0755 as decimal
    if kind == "float":
        lowered = value.lower()
        if lowered.lstrip("+-") in (".inf", ".nan"):
            return float("nan")
        return float(lowered)
    return value
