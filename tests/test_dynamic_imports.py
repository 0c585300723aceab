"""Imports by name (`importlib.import_module`, `__import__`) are invisible to import-linter's
contracts, so each module of wfops that makes one is declared here with its reason; any other
is a failure."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "wfops"

# module -> why it imports by name (and what it may import so).
DECLARED = {
    "wfops/__init__.py": "the public names load on first use (wfops.api, wfops.errors, ...), so `import wfops` "
                         "is cheap; for type checkers they are imported under TYPE_CHECKING, which the "
                         "contracts see",
    "wfops/api/__init__.py": "the API's names load on first use, as the root package's do (TYPE_CHECKING "
                             "imports show them to the contracts)",
    "wfops/report/__init__.py": "the reporter of the chosen --format, one of wfops.report's own modules",
    "wfops/model/json_schema.py": "the model of the file kind asked for, one of wfops.model's own modules",
    "wfops/cli/fastparse.py": "the verb's module (`wfops.cli.<verb>_cmd`), named by the call the typer app or the generated table gives, only when it runs",
    "wfops/sources/modules.py": "a python source's module: the user's code, never wfops",
}


def dynamic_imports(tree: ast.AST) -> list[int]:
    """Lines of calls to `import_module` (bare or `importlib.`) and `__import__`."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in {"import_module", "__import__"}:
                lines.append(node.lineno)
    return lines


def found() -> dict[str, list[int]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = dynamic_imports(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if lines:
            out[path.relative_to(PACKAGE.parent).as_posix()] = lines
    return out


def test_the_scan_sees_imports_by_name() -> None:
    assert dynamic_imports(ast.parse("import importlib\nimportlib.import_module('x')\n__import__('y')\n")) == [2, 3]


def test_only_the_declared_modules_import_by_name() -> None:
    undeclared = {path: lines for path, lines in found().items() if path not in DECLARED}
    assert undeclared == {}, "an import by name the contracts cannot see: import it normally, or declare it here"


def test_each_declared_module_still_imports_by_name() -> None:
    stale = sorted(set(DECLARED) - set(found()))
    assert stale == [], "no import by name there any more: drop the entry"
    assert all(why for why in DECLARED.values())
