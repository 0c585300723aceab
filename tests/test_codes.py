"""wfops/codes.py is the one list of diagnostic codes: the docs describe exactly those
codes, and every code the code base passes to a diagnostic is in it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from wfops.codes import CODES, KNOWN

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "diagnostics.md"
PACKAGE = REPO / "wfops"

# A table row whose first cell starts with a backticked code: | `stale-lock` ...
ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`(.*?)\|", re.M)
CODE_SHAPE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")

# Calls whose code argument is at this position: error("code", ...), sink.add("error", "code", ...).
CODE_ARGUMENT = {"error": 0, "warning": 0, "invalid": 0, "fail": 0, "make": 0,
                 "Diagnostic": 1, "add": 1, "_drift": 1}


def documented_rows() -> set[str]:
    return {m.group(1) for m in ROW.finditer(DOCS.read_text(encoding="utf-8"))}


def documented_anywhere_in_first_cells() -> set[str]:
    found = set()
    for m in ROW.finditer(DOCS.read_text(encoding="utf-8")):
        found.add(m.group(1))
        found.update(re.findall(r"`([a-z0-9-]+)`", m.group(2)))
    return {code for code in found if CODE_SHAPE.match(code)}


def used_in_code() -> dict[str, str]:
    """code -> where: string literals passed as the code of a diagnostic, and the first item of
    a `(code, message, hint, ...)` tuple a describing function returns (loader/schema_errors.py,
    compiler/checks/paths.py)."""
    used: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            literal = None
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                index = CODE_ARGUMENT.get(name)
                if index is not None and len(node.args) > index:
                    literal = node.args[index]
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) >= 3:
                literal = node.value.elts[0]
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str) \
                    and CODE_SHAPE.match(literal.value):
                used.setdefault(literal.value, f"{path.relative_to(REPO)}:{node.lineno}")
    return used


def code_shaped_literals() -> set[str]:
    """Every code-shaped string literal of the package outside codes.py (a code may be passed
    on through a variable, e.g. the loader's `duplicate-workflow`)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if path.name == "codes.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE_SHAPE.match(node.value):
                found.add(node.value)
    return found


def test_every_code_is_documented() -> None:
    missing = sorted(KNOWN - documented_rows())
    assert not missing, f"add a `| `code` | ...` row to docs/diagnostics.md for: {missing}"


def test_no_documented_code_is_stale() -> None:
    stale = sorted(documented_anywhere_in_first_cells() - KNOWN)
    assert not stale, f"docs/diagnostics.md describes codes wfops/codes.py does not list: {stale}"


def test_every_code_used_in_the_code_base_is_listed() -> None:
    used = used_in_code()
    assert len(used) > 50  # the scan finds the calls at all
    unknown = {code: where for code, where in used.items() if code not in KNOWN}
    assert not unknown, f"add these codes to wfops/codes.py (and docs/diagnostics.md): {unknown}"


def test_every_listed_code_is_used() -> None:
    unused = sorted(KNOWN - code_shaped_literals())
    assert not unused, f"wfops/codes.py lists codes nothing emits: {unused}"


def test_summaries_are_one_line() -> None:
    for code, summary in CODES.items():
        assert CODE_SHAPE.match(code), code
        assert summary and "\n" not in summary and len(summary) <= 120, code


def test_no_table_of_codes_names_an_unknown_one() -> None:
    """A set, list or dict of codes (e.g. the MCP advice's lock codes) that names a code
    wfops/codes.py does not list matches nothing: dead code, or a typo."""
    stray: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            items = node.keys if isinstance(node, ast.Dict) else \
                node.elts if isinstance(node, ast.Set | ast.List | ast.Tuple) else []
            texts = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
            if any(text in KNOWN for text in texts):
                for text in texts:
                    if CODE_SHAPE.match(text) and text not in KNOWN:
                        stray[text] = f"{path.relative_to(REPO)}:{node.lineno}"
    assert not stray, f"tables of codes name codes wfops/codes.py does not list: {stray}"
