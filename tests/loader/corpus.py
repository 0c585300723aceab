"""Hostile and broken YAML files, each with the one diagnostic it must produce.

`CASES` maps a case id to (file bytes, code, line, column). Shared by the
loader tests and the whole-stack CLI test.
"""

from __future__ import annotations

import pytest

from wfops.loader.yaml import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, MAX_SCALAR_CHARS

Case = tuple[bytes, str, int, int]


def _billion_laughs() -> bytes:
    lines = [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1).encode(), chr(ord("a") + i).encode()
        lines.append(cur + b": &" + cur + b" [" + b",".join([b"*" + prev] * 9) + b"]")
    return b"\n".join(lines) + b"\n"


def _deep_block(levels: int) -> bytes:
    return b"".join(b"  " * i + b"k:\n" for i in range(levels)) + b"  " * levels + b"v\n"


CASES: dict[str, Case] = {
    "anchor": (b"name: a\nx: &x 1\n", "yaml-anchor", 2, 4),
    "alias": (b"name: a\nx: *x\n", "yaml-alias", 2, 4),
    "alias-as-key": (b"name: a\n*x : 1\n", "yaml-alias", 2, 1),
    "billion-laughs": (_billion_laughs(), "yaml-anchor", 1, 4),
    "merge-key": (b"name: a\nx:\n  <<: {b: 2}\n", "yaml-merge-key", 3, 3),
    "merge-key-flow": (b"name: a\nx: {<<: {b: 2}}\n", "yaml-merge-key", 2, 5),
    "python-object-apply": (b'name: a\nx: !!python/object/apply:os.system ["touch MARKER"]\n',
                            "yaml-tag", 2, 4),
    "python-object-apply-root": (b'!!python/object/apply:os.system ["touch MARKER"]\n', "yaml-tag", 1, 1),
    "python-name": (b"name: a\nx: !!python/name:os.system\n", "yaml-tag", 2, 4),
    "verbatim-python-tag": (b"name: a\nx: !<tag:yaml.org,2002:python/none> ''\n", "yaml-tag", 2, 4),
    "custom-tag": (b"name: a\nx: !foo bar\n", "yaml-tag", 2, 4),
    "custom-tag-on-map": (b"name: a\nx: !foo {a: 1}\n", "yaml-tag", 2, 4),
    "binary-tag": (b"name: a\nx: !!binary aGVsbG8=\n", "yaml-tag", 2, 4),
    "set-tag": (b"name: a\nx: !!set {p, q}\n", "yaml-tag", 2, 4),
    "tag-directive": (b"%TAG !e! tag:example.com,2000:\n---\nname: a\n", "yaml-tag", 1, 1),
    "bad-int-tag": (b"name: a\nx: !!int abc\n", "yaml-tag", 2, 4),
    "seq-tag-on-scalar": (b"name: a\nx: !!seq abc\n", "yaml-tag", 2, 4),
    "duplicate-key": (b"name: a\nsteps: []\nname: b\n", "yaml-duplicate-key", 3, 1),
    "duplicate-key-nested": (b"name: a\nx:\n  p: 1\n  'p': 2\n", "yaml-duplicate-key", 4, 3),
    "too-deep-flow": (b"name: a\nx: " + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"\n",
                      "yaml-too-deep", 2, 3 + MAX_DEPTH),
    "too-deep-100k": (b"x: " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "yaml-too-deep", 1, 3 + MAX_DEPTH),
    "too-deep-100k-maps": (b"{a: " * 100_000 + b"1" + b"}" * 100_000 + b"\n", "yaml-too-deep",
                           1, 4 * MAX_DEPTH + 1),
    "too-deep-block": (_deep_block(MAX_DEPTH + 5), "yaml-too-deep",
                       MAX_DEPTH + 1, 2 * MAX_DEPTH + 1),
    "file-too-large": (b"name: a\n" + b"#" * MAX_FILE_BYTES + b"\n", "yaml-too-large", 1, 1),
    "scalar-too-large": (b"name: a\nx: '" + b"y" * (MAX_SCALAR_CHARS + 1) + b"'\n", "yaml-too-large", 2, 4),
    "too-many-nodes": (b"x: [" + b"1," * MAX_NODES + b"]\n", "yaml-too-large", 1, 2 * MAX_NODES - 1),
    "huge-integer": (b"name: a\nx: " + b"9" * 5000 + b"\n", "yaml-invalid-number", 2, 4),
    "non-utf8": (b"name: a\nx: caf\xe9\n", "yaml-encoding", 2, 7),
    "non-utf8-after-multibyte": ("name: a\nü: é".encode() + b"\xff\n", "yaml-encoding", 2, 5),
    "utf16": ("name: a\n".encode("utf-16"), "yaml-encoding", 1, 1),
    "nul-byte": (b"name: a\nx: b\x00c\n", "yaml-encoding", 2, 5),
    "control-char": (b"name: a\nx: b\x07c\n", "yaml-encoding", 2, 5),
    "tab-indent": (b"name: a\nx:\n\ty: 1\n", "yaml-tab", 3, 1),
    "multiple-documents": (b"name: a\n---\nname: b\n", "yaml-multiple-documents", 2, 1),
    "empty-file": (b"", "yaml-empty", 1, 1),
    "whitespace-only": (b"\n   \n\n", "yaml-empty", 1, 1),
    "comment-only": (b"# just a comment\n# and another\n", "yaml-empty", 1, 1),
    "explicit-null-document": (b"--- ~\n", "yaml-empty", 1, 1),
    "root-list": (b"- name: a\n- name: b\n", "yaml-not-mapping", 1, 1),
    "root-scalar": (b"just text\n", "yaml-not-mapping", 1, 1),
    "root-number": (b"42\n", "yaml-not-mapping", 1, 1),
    "yaml-1.1-directive": (b"%YAML 1.1\n---\nname: a\non: yes\n", "yaml-version", 1, 1),
    "inf": (b"name: a\nx: .inf\n", "yaml-invalid-number", 2, 4),
    "negative-inf": (b"name: a\nx: -.Inf\n", "yaml-invalid-number", 2, 4),
    "nan": (b"name: a\nx: .nan\n", "yaml-invalid-number", 2, 4),
    "overflowing-float": (b"name: a\nx: 1e999\n", "yaml-invalid-number", 2, 4),
    "complex-key": (b"name: a\n? [p, q]\n: 1\n", "yaml-key-type", 2, 3),
    "complex-key-flow": (b"name: a\nx: {{p: 1}: 2}\n", "yaml-key-type", 2, 5),
    "syntax-unclosed-flow": (b"name: a\nx: [1, 2\n", "yaml-syntax", 3, 1),
    "syntax-bad-indent": (b"name: a\nx:\n  - 1\n - 2\n", "yaml-syntax", 4, 2),
    "syntax-unclosed-quote": (b"name: 'a\n", "yaml-syntax", 2, 1),
}


#: Cases that take the loader to the far end of a limit (half a million nodes, over a second
#: of parsing): the loader's own test keeps them in the fast lane; the passes through a whole
#: project and the CLI, which prove the same refusal reaches the report, run in the slow lane.
#: None of them is traced for coverage (`no_cover`): the small cases run the same lines, and
#: tracing half a million nodes multiplies the parse's time several times over.
COSTLY = frozenset({"too-many-nodes"})


def loader_cases() -> list[object]:
    """Every case id for the loader's own parametrize, the costly ones untraced."""
    return [pytest.param(case, marks=pytest.mark.no_cover) if case in COSTLY else case for case in sorted(CASES)]


def whole_stack_cases() -> list[object]:
    """Every case id for a parametrize, the costly ones marked slow (and untraced)."""
    return [pytest.param(case, marks=[pytest.mark.slow, pytest.mark.no_cover]) if case in COSTLY else case
            for case in sorted(CASES)]
