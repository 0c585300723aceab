"""The one YAML loader for every file wfops reads.

It builds plain JSON-like data straight from the parser's event stream (the C
parser when available), so it never recurses, never expands aliases and never
constructs objects from tags. Every value's and key's position is recorded as it
goes, which is what lets any later check point at file:line:col.

Anything hostile or broken raises `YamlLoadError` carrying one `Diagnostic`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wfops.diagnostics import Diagnostic, error

MAX_FILE_BYTES = 1024 * 1024
MAX_SCALAR_CHARS = 64 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

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


@dataclass
class Document:
    """Loaded data plus where each part of it stands in the file (1-based)."""

    file: str
    data: Any
    positions: dict[PathKey, Position] = field(default_factory=dict)
    key_positions: dict[PathKey, Position] = field(default_factory=dict)

    def at(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        """Position of the deepest node on `path` that exists (the key itself if `key`)."""
        parts = tuple(path)
        while parts:
            table = self.key_positions if key else self.positions
            if parts in table:
                return table[parts]
            if key is False and parts in self.key_positions:
                return self.key_positions[parts]
            parts = parts[:-1]
        return self.positions.get((), (1, 1))


def load_yaml_file(path: Path, display: str | None = None) -> Document:
    shown = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise YamlLoadError(error(
                "yaml-too-large", f"file is {size} bytes; wfops reads files up to {MAX_FILE_BYTES} bytes",
                shown, hint="split the file, or move large data out of YAML"))
        raw = path.read_bytes()
    except FileNotFoundError:
        raise YamlLoadError(error("file-missing", f"{shown} does not exist", shown,
                                  hint="check the path, or create the file")) from None
    except IsADirectoryError:
        raise YamlLoadError(error("file-missing", f"{shown} is a directory, not a YAML file", shown)) from None
    except OSError as exc:
        raise YamlLoadError(error("file-unreadable", f"cannot read {shown}: {exc.strerror}", shown)) from None
    return load_yaml_bytes(raw, shown)


def load_yaml_bytes(raw: bytes, file: str) -> Document:
    if len(raw) > MAX_FILE_BYTES:
        raise YamlLoadError(error(
            "yaml-too-large", f"file is {len(raw)} bytes; wfops reads files up to {MAX_FILE_BYTES} bytes",
            file, hint="split the file, or move large data out of YAML"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlLoadError(error(
            "yaml-encoding", f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", file, (line, column),
            hint="save the file as UTF-8")) from None
    return load_yaml_text(text, file)


def load_yaml_text(text: str, file: str) -> Document:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise YamlLoadError(error("yaml-too-large", f"text is larger than {MAX_FILE_BYTES} bytes", file))
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise YamlLoadError(error("yaml-encoding", "the file contains a NUL byte", file, (line, 1),
                                  hint="YAML files are text; remove the binary content"))
    return _Builder(file).build(text)


def _pos(mark: Any) -> Position:
    return (mark.line + 1, mark.column + 1)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.doc = Document(file, None)

    def fail(self, code: str, message: str, mark: Any = None, hint: str | None = None) -> None:
        at = _pos(mark) if mark is not None else (1, 1)
        raise YamlLoadError(error(code, message, self.file, at, hint))

    def build(self, text: str) -> Document:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        yaml = YAML(typ="safe")
        try:
            self._consume(yaml, yaml.parse(text))
        except YamlLoadError:
            raise
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "invalid YAML"
            if mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t":
                self.fail("yaml-tab", "a tab character is used where YAML allows only spaces", mark,
                          hint="indent with spaces, never tabs")
            self.fail("yaml-syntax", f"invalid YAML: {problem}", mark,
                      hint="fix the YAML syntax at this position (check indentation, quotes and colons)")
        except YAMLError as exc:
            self.fail("yaml-syntax", f"invalid YAML: {exc}")
        except RecursionError:
            self.fail("yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
        doc = self.doc
        if doc.data is None:
            self.fail("yaml-empty", "the file holds no YAML document",
                      hint="write a mapping at the top level, e.g. `name: ...`")
        if not isinstance(doc.data, dict):
            self.fail("yaml-not-mapping", f"the top level must be a mapping, not a {_kind(doc.data)}",
                      None, hint="start the file with `key: value` lines")
        return doc

    def _consume(self, yaml: Any, events: Any) -> None:
        from ruamel.yaml import events as ev

        # Each open collection: [container, path, pending key (for maps), seen keys]
        stack: list[list[Any]] = []
        documents = 0
        nodes = 0
        for event in events:
            kind = type(event)
            if kind is ev.ScalarEvent or kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
                nodes += 1
                if nodes > MAX_NODES:
                    self.fail("yaml-too-large", f"the document has more than {MAX_NODES} nodes", event.start_mark)
                if event.anchor is not None:
                    self.fail("yaml-anchor", f"anchors (&{event.anchor}) are not allowed in wfops files",
                              event.start_mark, hint="write the value out in full where it is used")
                self._check_tag(event)
            if kind is ev.ScalarEvent:
                if len(event.value) > MAX_SCALAR_CHARS:
                    self.fail("yaml-too-large", f"a scalar is longer than {MAX_SCALAR_CHARS} characters",
                              event.start_mark, hint="move large data out of YAML")
                if stack and stack[-1][2] is _NO_KEY and isinstance(stack[-1][0], dict):
                    self._take_key(stack[-1], event)
                    continue
                self._place(stack, self._scalar(event), event)
            elif kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
                if stack and stack[-1][2] is _NO_KEY and isinstance(stack[-1][0], dict):
                    self.fail("yaml-key-type", "a mapping key must be a plain scalar, not a collection",
                              event.start_mark, hint="use a string key")
                if len(stack) >= MAX_DEPTH:
                    self.fail("yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels", event.start_mark,
                              hint="flatten the structure")
                container: dict | list = {} if kind is ev.MappingStartEvent else []
                path = self._place(stack, container, event)
                stack.append([container, path, _NO_KEY, set()])
            elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
                stack.pop()
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
                    self.fail("yaml-tag", "%TAG directives are not allowed", event.start_mark)

    def _check_tag(self, event: Any) -> None:
        tag = event.tag
        if tag is None or tag == "!" or tag in _STANDARD_TAGS:
            return
        self.fail("yaml-tag", f"the tag {tag!r} is not allowed in wfops files", event.start_mark,
                  hint="remove the tag; wfops files hold plain data only")

    def _take_key(self, frame: list[Any], event: Any) -> None:
        if event.tag is None and not event.style and event.value == "<<":
            self.fail("yaml-merge-key", "merge keys (<<) are not allowed in wfops files", event.start_mark,
                      hint="write the merged keys out in full")
        key = event.value
        if key in frame[3]:
            self.fail("yaml-duplicate-key", f"duplicate key {key!r}", event.start_mark,
                      hint="remove or rename one of the two entries")
        frame[3].add(key)
        frame[2] = key
        self.doc.key_positions[(*frame[1], key)] = _pos(event.start_mark)

    def _place(self, stack: list[list[Any]], value: Any, event: Any) -> tuple:
        if not stack:
            if self.doc.data is not None:
                self.fail("yaml-multiple-documents", "the file holds more than one YAML document", event.start_mark)
            self.doc.data = value
            path: tuple = ()
        else:
            frame = stack[-1]
            container = frame[0]
            if isinstance(container, dict):
                key = frame[2]
                container[key] = value
                frame[2] = _NO_KEY
                path = (*frame[1], key)
            else:
                path = (*frame[1], len(container))
                container.append(value)
        self.doc.positions[path] = _pos(event.start_mark)
        return path

    def _scalar(self, event: Any) -> Any:
        value = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if event.style or tag == "!":
                return value
            tag = _resolve_plain(value)
        if tag == "tag:yaml.org,2002:str" or tag == "tag:yaml.org,2002:timestamp":
            return value
        if tag == "tag:yaml.org,2002:merge":
            self.fail("yaml-merge-key", "merge keys (<<) are not allowed in wfops files", event.start_mark)
        if tag not in _STANDARD_TAGS:
            return value
        try:
            result = _convert(tag, value)
        except ValueError:  # a malformed explicitly tagged scalar such as `!!int abc`
            self.fail("yaml-syntax", f"{value!r} is not a valid {tag.rsplit(':', 1)[-1]}", event.start_mark)
        if isinstance(result, float) and not math.isfinite(result):
            self.fail("yaml-invalid-number", f"{value!r} is not a finite number; JSON cannot hold it",
                      event.start_mark, hint="use a finite number, or quote it to make it a string")
        return result


_NO_KEY = object()


_CORE_SCHEMA = [
    ("tag:yaml.org,2002:null", re.compile(r"~|null|Null|NULL|")),
    ("tag:yaml.org,2002:bool", re.compile(r"true|True|TRUE|false|False|FALSE")),
    ("tag:yaml.org,2002:int", re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")),
    ("tag:yaml.org,2002:float", re.compile(
        r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")),
]


def _resolve_plain(value: str) -> str:
    """The YAML 1.2 core schema: `on`, `yes` and dates stay strings."""
    for tag, pattern in _CORE_SCHEMA:
        if pattern.fullmatch(value):
            return tag
    return "tag:yaml.org,2002:str"


def _convert(tag: str, value: str) -> Any:
    """Scalars of the YAML 1.2 core schema; everything else stays a string."""
    kind = tag.rsplit(":", 1)[-1]
    if kind == "null":
        return None
    if kind == "bool":
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise ValueError(value)
        return lowered == "true"
    if kind == "int":
        digits = value.replace("_", "")
        try:
            return int(digits, 0)
        except ValueError:
            return int(digits, 10)  # leading zeros: YAML 1.2 reads 0755 as decimal
    if kind == "float":
        lowered = value.lower().replace("_", "")
        if lowered.lstrip("+-") in (".inf", ".nan"):
            return float("nan")
        return float(lowered)
    return value


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__
